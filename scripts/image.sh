#!/usr/bin/env bash
# Build kreplicate's container image (deploy/container/Containerfile) from a built binary,
# offline: no registry, no base image.
#
#   scripts/image.sh [BINARY] [TAG]
#
# BINARY: the kreplicate binary to package (default target/release/kreplicate; the tests pass
# target/debug/kreplicate). TAG: the image's name (default kreplicate:VERSION, VERSION from
# `BINARY --version`, and kreplicate:latest).
#
# The root file system is assembled here from this machine's files: the binary (debug info
# stripped), exactly the shared libraries `ldd BINARY` lists (at the paths it resolves, plus the
# dynamic loader at the binary's interpreter path), Debian's CA bundle
# (/etc/ssl/certs/ca-certificates.crt, also OpenSSL's default file /usr/lib/ssl/cert.pem), the
# Debian copyright files of the packages those come from, an /etc/passwd and /etc/group with
# the user kreplicate (65532) and an /etc/nsswitch.conf; the Containerfile copies it onto an
# empty base. Build the binary on the Debian release the image is for (its libraries are the
# ones packaged).
#
# Env: KREPLICATE_CONTAINER_TOOL (default podman; docker works too), KREPLICATE_PODMAN_FLAGS
# (global flags before `build`, e.g. "--cgroup-manager cgroupfs"). Prints the image's tag, id
# and size on its last line.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "image: ERROR: $*" >&2; exit 1; }

BINARY="${1:-$REPO/target/release/kreplicate}"
[ -x "$BINARY" ] || die "no executable binary at $BINARY (cargo build --release, or pass the binary to package)"
VERSION="$("$BINARY" --version | awk '{print $2}')"
[ -n "$VERSION" ] || die "$BINARY --version printed no version"
TAG="${2:-kreplicate:$VERSION}"
TAGS=(-t "$TAG")
[ -n "${2:-}" ] || TAGS+=(-t kreplicate:latest)
TOOL="${KREPLICATE_CONTAINER_TOOL:-podman}"
command -v "$TOOL" >/dev/null || die "$TOOL not found (scripts/install-deps.sh installs podman)"
# shellcheck disable=SC2206
TOOL_FLAGS=(${KREPLICATE_PODMAN_FLAGS:-})

mkdir -p "$REPO/target/image"
CONTEXT="$(mktemp -d "$REPO/target/image/context.XXXXXX")"
trap 'rm -rf "$CONTEXT"' EXIT
ROOT="$CONTEXT/rootfs"
mkdir -p "$ROOT/usr/local/bin" "$ROOT/etc/ssl/certs" "$ROOT/usr/lib/ssl" "$ROOT/usr/share/doc"

# The binary, without its debug info (panics still name their functions).
cp "$BINARY" "$ROOT/usr/local/bin/kreplicate"
strip --strip-debug "$ROOT/usr/local/bin/kreplicate"
chmod 0755 "$ROOT/usr/local/bin/kreplicate"

# Exactly what ldd lists: "name => /path (addr)" and the loader "/path (addr)"; the vDSO has no file.
mapfile -t LIBS < <(ldd "$BINARY" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}')
((${#LIBS[@]})) || die "ldd lists no shared library for $BINARY (a static binary needs no rootfs libraries: adapt this script)"
if ldd "$BINARY" | grep -q "not found"; then die "ldd: a library of $BINARY is not found: $(ldd "$BINARY" | grep 'not found')"; fi
INTERP="$(readelf -l "$BINARY" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')"
[ -n "$INTERP" ] || die "$BINARY names no program interpreter"
declare -A PKGS=()
for lib in "${LIBS[@]}" "$INTERP"; do
    mkdir -p "$ROOT$(dirname "$lib")"
    cp -L "$lib" "$ROOT$lib"
    # The package that ships it (dpkg knows the file under /usr on a merged-/usr system).
    real="$(readlink -f "$lib")"
    pkg="$(dpkg -S "$real" 2>/dev/null || dpkg -S "${real#/usr}" 2>/dev/null || true)"
    pkg="${pkg%%:*}"
    [ -n "$pkg" ] && PKGS["$pkg"]=1
done

# CA certificates for TLS: OpenSSL's default file is /usr/lib/ssl/cert.pem on Debian.
CA=/etc/ssl/certs/ca-certificates.crt
[ -s "$CA" ] || die "$CA missing (apt-get install ca-certificates)"
cp -L "$CA" "$ROOT$CA"
ln -s "$CA" "$ROOT/usr/lib/ssl/cert.pem"
PKGS[ca-certificates]=1

# Licences of what the image ships.
for pkg in "${!PKGS[@]}"; do
    if [ -f "/usr/share/doc/$pkg/copyright" ]; then
        mkdir -p "$ROOT/usr/share/doc/$pkg"
        cp "/usr/share/doc/$pkg/copyright" "$ROOT/usr/share/doc/$pkg/copyright"
    fi
done
[ -f "$REPO/LICENSE" ] && mkdir -p "$ROOT/usr/share/doc/kreplicate" && cp "$REPO/LICENSE" "$ROOT/usr/share/doc/kreplicate/"

cat >"$ROOT/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
kreplicate:x:65532:65532:kreplicate:/nonexistent:/sbin/nologin
EOF
cat >"$ROOT/etc/group" <<'EOF'
root:x:0:
kreplicate:x:65532:
EOF
cat >"$ROOT/etc/nsswitch.conf" <<'EOF'
passwd: files
group: files
hosts: files dns
EOF
chmod -R u=rwX,go=rX "$ROOT"

cp "$REPO/deploy/container/Containerfile" "$CONTEXT/Containerfile"
# podman keeps an intermediate image per build step unless told not to.
BUILD_FLAGS=()
[ "$(basename "$TOOL")" = podman ] && BUILD_FLAGS+=(--layers=false)
"$TOOL" "${TOOL_FLAGS[@]}" build "${BUILD_FLAGS[@]}" --quiet --build-arg "VERSION=$VERSION" \
    "${TAGS[@]}" -f "$CONTEXT/Containerfile" "$CONTEXT" >&2 \
    || die "$TOOL build failed"
"$TOOL" "${TOOL_FLAGS[@]}" image ls --format '{{.Repository}}:{{.Tag}} {{.ID}} {{.Size}}' "$TAG" | head -1 \
    | sed 's/^/image: /'
