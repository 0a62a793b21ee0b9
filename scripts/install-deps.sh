#!/bin/sh
# Install what rtscope's build, run and tests need, only when missing.
# Idempotent: a second run installs nothing. Debian/Ubuntu (apt-get).
set -eu

# Debian packages: rt-tests (cyclictest, hackbench: the reference and a
# load), stress-ng (loads), strace (the hot-path syscall test), util-linux
# (taskset and setpriv: the tune tests; unshare: the static-binary test),
# mount (its bind mounts), chromium (the report test renders and prints
# the HTML report headless), poppler-utils (pdftotext: the report test
# reads where the printed comparison's columns fall). `make deb` and its test need only dpkg-deb,
# gzip and bash, which every Debian system has. prometheus: the
# --metrics test starts one on loopback (its own config and storage, no
# system service) and queries it. postgresql (15 on Debian 12):
# tests/it/postgres.rs initialises and starts its own cluster in a
# temporary directory (initdb, pg_ctl); no system service is used.
PACKAGES="${RTSCOPE_PACKAGES:-rt-tests stress-ng strace util-linux mount chromium poppler-utils prometheus postgresql}"

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -n "$missing" ]; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
            echo "install-deps: need root (or sudo) to install:$missing" >&2; exit 2
        fi
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "install-deps: no apt-get here; install these packages by hand:$missing" >&2
        exit 2
    fi
    echo "install-deps: installing$missing"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "install-deps: cargo (Rust) is missing: install it with rustup (https://rustup.rs), then re-run" >&2
    exit 2
fi
