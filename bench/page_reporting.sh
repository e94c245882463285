#!/usr/bin/env bash
# What the VM's free page reporting costs a writer (issue 32): writes FILE_MB [2000] MB with dd
# into a fresh file on TMPDIR's filesystem, deletes it, and writes it again at once, after 25 s and
# after 65 s; first with the machine's page_reporting_order as it is, then with it at 11 (no free
# block is large enough to report), restored at exit. Prints the system CPU seconds of each write
# and how many KiB the kernel reported to the host since the write before, as JSON (OUT [stdout]).
# A kernel with reporting on hands freed memory back to the host within seconds; the next write
# into it faults it in again: the cost bench/run.sh's HOLD_MEMORY keeps out of its rounds.
# Needs root (writes /sys/module/page_reporting/parameters/page_reporting_order).
# Exit: 0 measured, 1 no page reporting here or not writable.
set -euo pipefail
P=/sys/module/page_reporting/parameters
FILE_MB="${FILE_MB:-2000}"
OUT="${OUT:-/dev/stdout}"
[ -w "$P/page_reporting_order" ] || { echo "page_reporting: no writable $P/page_reporting_order (no page reporting, or not root)" >&2; exit 1; }
was="$(cat "$P/page_reporting_order")"
file="$(mktemp "${TMPDIR:-/tmp}/page-reporting.XXXXXX")"
trap 'echo "$was" >"$P/page_reporting_order"; rm -f "$file" "${LAST:-}"' EXIT

# write LABEL: one dd of FILE_MB, then the file deleted; prints a JSON object with the KiB the
# kernel reported to the host since the last write ended (LAST, a file: writes run in $(...)).
LAST="$(mktemp)"
cat "$P/reported_kib" >"$LAST"
write() {
    local before sys
    before="$(cat "$P/reported_kib")"
    sys="$( { /usr/bin/time -f %S dd if=/dev/zero of="$file" bs=1M count="$FILE_MB" status=none; } 2>&1 )"
    rm -f "$file"
    printf '{"order": %s, "after_s": %s, "system_cpu_s": %s, "reported_kib_since_last_write": %s}' \
        "$(cat "$P/page_reporting_order")" "$1" "$sys" "$((before - $(cat "$LAST")))"
    cat "$P/reported_kib" >"$LAST"
}
runs=()
for order in "$was" 11; do
    echo "$order" >"$P/page_reporting_order"
    # The first write may find memory the host already took back; then at once, 25 s and 65 s.
    runs+=("$(write '"first"')")
    runs+=("$(write 0)")
    sleep 25; runs+=("$(write 25)")
    sleep 40; runs+=("$(write 65)")
done
{
    printf '{"when": "%s", "file_mb": %s, "kernel": "%s", "order_was": %s, "runs": [\n  ' \
        "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$FILE_MB" "$(uname -r)" "$was"
    (IFS=,; printf '%s' "${runs[*]}" | sed 's/},{/},\n  {/g')
    printf '\n]}\n'
} >"$OUT"
