#!/usr/bin/env bash
# Build the Debian package of kreplicate from a built binary, without cargo-deb (which would be
# compiled from crates.io first): lay out the package's tree, derive Depends from the binary's
# shared libraries with dpkg-shlibdeps, and run dpkg-deb --build --root-owner-group.
#
#   scripts/deb.sh [-o DIR] [-Z xz|gzip|zstd|none] [BINARY]
#
# BINARY: default target/release/kreplicate (cargo build --release); the tests package
# target/debug/kreplicate. -o: where the .deb goes (default target/debian). -Z: dpkg-deb's
# compression (default xz; the tests use gzip: xz takes 7 s for a stripped debug binary here).
# Prints the .deb's path on stdout.
#
# The package: /usr/bin/kreplicate (stripped), the man pages of man/ and the bash, zsh and fish
# completions of completions/ where Debian's shells look for them, the systemd units of
# deploy/systemd/ (kreplicate@.service, kreplicate-catchup@.service and .timer) and its
# sysusers.d file, the example config and the guide under /usr/share/doc/kreplicate; the
# maintainer scripts of deploy/debian/ create the user kreplicate (and remove it on purge).
# No conffile: /etc/kreplicate/kreplicate.yaml is the administrator's to write (from the example).
# Env: DEBFULLNAME and DEBEMAIL name the maintainer (Debian's convention).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$REPO/target/debian"
COMPRESS=xz
die() { echo "deb.sh: ERROR: $*" >&2; exit 1; }
while getopts "o:Z:" opt; do
    case "$opt" in
    o) OUT="$OPTARG" ;;
    Z) COMPRESS="$OPTARG" ;;
    *) die "usage: scripts/deb.sh [-o DIR] [-Z xz|gzip|zstd|none] [BINARY]" ;;
    esac
done
shift $((OPTIND - 1))
BIN="${1:-$REPO/target/release/kreplicate}"
[ -x "$BIN" ] || die "$BIN: no such executable (cargo build --release first)"
for tool in dpkg-deb dpkg-shlibdeps strip gzip; do
    command -v "$tool" >/dev/null || die "$tool is missing: run scripts/install-deps.sh"
done

# The version and description are Cargo.toml's, so a release needs no second place to edit.
field() { sed -n "/^\[package\]/,/^\[/s/^$1 *= *\"\(.*\)\"/\1/p" "$REPO/Cargo.toml" | head -n1; }
VERSION="$(field version)"
SUMMARY="$(field description)"
[ -n "$VERSION" ] && [ -n "$SUMMARY" ] || die "no version or description in Cargo.toml's [package]"
ARCH="$(dpkg --print-architecture)"

# dpkg-shlibdeps wants the tree at debian/PACKAGE below its working folder.
mkdir -p "$OUT"
WORK="$(mktemp -d "$OUT/.build.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
PKG="$WORK/debian/kreplicate"
DOC="$PKG/usr/share/doc/kreplicate"
install -d "$PKG/DEBIAN" "$PKG/usr/bin" "$PKG/usr/share/man/man1" "$DOC/examples" \
    "$PKG/usr/lib/systemd/system" "$PKG/usr/lib/sysusers.d" \
    "$PKG/usr/share/bash-completion/completions" "$PKG/usr/share/zsh/vendor-completions" \
    "$PKG/usr/share/fish/vendor_completions.d"

# Stripped: the debug info (and release's line tables, debug = 1) is most of the file.
strip --strip-unneeded -o "$PKG/usr/bin/kreplicate" "$BIN"
chmod 0755 "$PKG/usr/bin/kreplicate"
# Man pages and docs compressed as Debian policy asks (gzip -9n: no name or time stamp inside).
for page in "$REPO"/man/*.1; do
    gzip -9n -c "$page" >"$PKG/usr/share/man/man1/$(basename "$page").gz"
done
gzip -9n -c "$REPO/docs/guide.md" >"$DOC/guide.md.gz"
install -m 0644 "$REPO/completions/kreplicate.bash" "$PKG/usr/share/bash-completion/completions/kreplicate"
install -m 0644 "$REPO/completions/_kreplicate" "$PKG/usr/share/zsh/vendor-completions/_kreplicate"
install -m 0644 "$REPO/completions/kreplicate.fish" "$PKG/usr/share/fish/vendor_completions.d/kreplicate.fish"
for unit in kreplicate@.service kreplicate-catchup@.service kreplicate-catchup@.timer; do
    install -m 0644 "$REPO/deploy/systemd/$unit" "$PKG/usr/lib/systemd/system/$unit"
done
install -m 0644 "$REPO/deploy/systemd/kreplicate.sysusers" "$PKG/usr/lib/sysusers.d/kreplicate.conf"
install -m 0644 "$REPO/deploy/systemd/kreplicate.yaml" "$DOC/examples/kreplicate.yaml"
install -m 0644 "$REPO/deploy/debian/copyright" "$DOC/copyright"
for script in postinst prerm postrm; do
    install -m 0755 "$REPO/deploy/debian/$script" "$PKG/DEBIAN/$script"
done
# Folders 0755 whatever the umask (dpkg-deb refuses group- or world-writable DEBIAN).
find "$PKG" -type d -exec chmod 0755 {} +

# Depends: the packages of the binary's shared libraries (libc6, libssl3, zlib1g, ...) from
# dpkg-shlibdeps, and what the postinst creates the user with.
printf 'Source: kreplicate\n\nPackage: kreplicate\nArchitecture: any\n' >"$WORK/debian/control"
SHLIBS="$(cd "$WORK" && dpkg-shlibdeps -O -edebian/kreplicate/usr/bin/kreplicate)" \
    || die "dpkg-shlibdeps failed"
SHLIBS="${SHLIBS#shlibs:Depends=}"
[ -n "$SHLIBS" ] || die "dpkg-shlibdeps found no shared libraries"

cat >"$PKG/DEBIAN/control" <<CONTROL
Package: kreplicate
Version: $VERSION
Architecture: $ARCH
Maintainer: ${DEBFULLNAME:-kreplicate maintainers} <${DEBEMAIL:-maintainers@kreplicate.invalid}>
Installed-Size: $(du -sk --exclude=DEBIAN "$PKG" | cut -f1)
Depends: $SHLIBS, adduser | systemd-sysusers
Section: net
Priority: optional
Description: $SUMMARY
 kreplicate copies Kafka topics from one cluster to another: once up to the current end
 (--until-caught-up, from cron or a systemd timer) or continuously, keeping each record's
 partition, order, key, value, headers and timestamp; at-least-once by default, or
 exactly-once. It also translates consumer group positions and verifies copies.
 .
 The package runs each named flow of /etc/kreplicate/kreplicate.yaml as a systemd unit:
 kreplicate@FLOW.service (continuous) or kreplicate-catchup@FLOW.timer (every 10 minutes),
 as the system user kreplicate. Example config: /usr/share/doc/kreplicate/examples.
CONTROL

DEB="$OUT/kreplicate_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group -Z"$COMPRESS" --build "$PKG" "$DEB" >&2
echo "$DEB"
