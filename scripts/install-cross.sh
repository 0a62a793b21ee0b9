#!/bin/sh
# Install what cross-building rtscope for ARM boards needs, only when
# missing: `make static-arm64`, `make static-armhf`, their packages and
# `make test`'s ARM tier call it. Usage: install-cross.sh ARCH... (Debian
# architecture names: arm64, armhf). Idempotent: a second run installs
# nothing. Debian/Ubuntu (apt-get).
#
# The toolchain is Debian's own (docs/arm.md): rustc-web and cargo-web
# (installed as /usr/bin/rustc and /usr/bin/cargo; a rustup toolchain, if
# any, stays first on PATH and is not touched) with the standard library
# of each target from libstd-rust-web-dev:ARCH (Multi-Arch: same, so the
# ARCH is added to dpkg's foreign architectures), the gcc-*-linux-gnu*
# cross compilers (the linker, and the C compiler of the bundled SQLite)
# and qemu-user-static (the ARM tests run under qemu-user). Where rustup
# can reach its servers, `rustup target add` does the same job (docs/arm.md).
set -eu

die() { echo "install-cross: $*" >&2; exit 2; }

[ $# -gt 0 ] || die "usage: install-cross.sh ARCH... (arm64, armhf)"
command -v dpkg >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 ||
    die "no dpkg/apt-get here: install a Rust toolchain with the targets $* by hand (docs/arm.md)"

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "need root (or sudo) to install packages"
    SUDO=sudo
fi

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

packages="rustc-web cargo-web qemu-user-static"
archs=""
for arch in "$@"; do
    case "$arch" in
    arm64) packages="$packages libstd-rust-web-dev:arm64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross" ;;
    armhf) packages="$packages libstd-rust-web-dev:armhf gcc-arm-linux-gnueabihf libc6-dev-armhf-cross" ;;
    *) die "unknown architecture '$arch' (arm64 or armhf)" ;;
    esac
    archs="$archs $arch"
done

missing=""
for p in $packages; do
    case "$p" in
    # Either the target's standard library or the source to build it from.
    libstd-rust-web-dev:*) installed "$p" || installed rust-web-src || missing="$missing $p" ;;
    *) installed "$p" || missing="$missing $p" ;;
    esac
done
[ -z "$missing" ] && exit 0

for arch in $archs; do
    if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
        echo "install-cross: adding $arch to dpkg's architectures (for libstd-rust-web-dev:$arch)" >&2
        $SUDO dpkg --add-architecture "$arch"
    fi
done

echo "install-cross: installing$missing" >&2
# One apt at a time (scripts/install-deps.sh takes the same lock; apt-get
# runs without its descriptor, so nothing it starts keeps the lock).
exec 9>>/tmp/rtscope-apt.lock
flock -w 900 9 || die "another apt of rtscope's held /tmp/rtscope-apt.lock for 15 minutes"
# A mirror caught in the middle of a sync serves an index that does not
# match its Release file; apt-get then ignores that index and says so.
# Try again a few times, then let the install name what is still missing.
for try in 1 2 3; do
    if $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq 9>&- 2>/tmp/install-cross.$$; then
        break
    fi
    [ "$try" = 3 ] || sleep 10
done
if [ -s /tmp/install-cross.$$ ]; then
    sed 's/^/install-cross: apt-get update: /' /tmp/install-cross.$$ >&2
fi
rm -f /tmp/install-cross.$$

# The standard library must be the compiler's own version.
want=$(apt-cache policy rustc-web | sed -n 's/^ *Candidate: //p')
[ -n "$want" ] && [ "$want" != "(none)" ] ||
    die "Debian's rustc-web is not in the apt sources (it is in bookworm-security and later releases)"
# Where the mirror's index for ARCH cannot be read (seen here: a
# bookworm-security index for armhf that did not match its Release file),
# libstd-rust-web-dev:ARCH cannot be installed; the standard library is
# then built from Debian's own source of it (rust-web-src, the same
# version, from the host's index) by cargo's -Zbuild-std, which the
# Makefile uses when /usr/lib/rustlib/TRIPLE is missing (docs/arm.md).
pinned=""
for p in $missing; do
    case "$p" in
    libstd-rust-web-dev:*)
        arch=${p#*:}
        if apt-cache madison "$p" 2>/dev/null | awk -v v="$want" '$3 == v {f=1} END {exit !f}'; then
            pinned="$pinned $p=$want"
        else
            echo "install-cross: libstd-rust-web-dev:$arch $want is not in apt's lists (the mirror's $arch index may be mid-sync: apt-get update's messages above);" \
                "its standard library will be built from rust-web-src $want instead" >&2
            installed rust-web-src || pinned="$pinned rust-web-src=$want"
        fi
        ;;
    rustc-web | cargo-web) pinned="$pinned $p=$want" ;;
    *) pinned="$pinned $p" ;;
    esac
done
[ -n "$pinned" ] || exit 0
# Never remove what the user has: rustc-web Conflicts with Debian's rustc
# (and cargo-web with cargo), so on a workstation with those apt would
# replace the user's compiler. apt-get says which packages it would
# remove; then nothing is installed and the user chooses (docs/arm.md).
removed=$(LC_ALL=C apt-get install -s --no-install-recommends $pinned 9>&- 2>/dev/null |
    sed -n 's/^Remv \([^ ]*\).*/\1/p' | tr '\n' ' ')
[ -z "$removed" ] ||
    die "installing$pinned would remove $removed(installed here); nothing was installed. Either remove them yourself and run this again, or add the targets to a rustup toolchain (docs/arm.md), or leave the ARM builds out (ARM_ARCHS= for make test)"
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-remove --no-install-recommends $pinned 9>&- >/dev/null
echo "install-cross: installed$pinned" >&2
