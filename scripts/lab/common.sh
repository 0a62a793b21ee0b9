# Shared by the lab's scripts (sourced, not run).

say() { echo "lab: $*" >&2; }
die() { echo "lab: $*" >&2; exit 2; }

# The lab cache, outside the checkout (docs/lab.md).
lab_cache() {
    if [ -n "${RTSCOPE_LAB_CACHE:-}" ]; then
        echo "$RTSCOPE_LAB_CACHE"
    elif [ -n "${XDG_CACHE_HOME:-}" ]; then
        echo "$XDG_CACHE_HOME/rtscope/lab"
    elif [ -n "${HOME:-}" ]; then
        echo "$HOME/.cache/rtscope/lab"
    else
        echo /var/cache/rtscope/lab
    fi
}

# The guests' Debian architecture: amd64 (the default) or arm64, from the
# argument, else RTSCOPE_LAB_ARCH. qemu's and uname's names are taken too.
lab_arch() {
    case "${1:-${RTSCOPE_LAB_ARCH:-amd64}}" in
        amd64|x86_64) echo amd64 ;;
        arm64|aarch64) echo arm64 ;;
        *) die "the lab's guests are amd64 or arm64, not '${1:-$RTSCOPE_LAB_ARCH}'" ;;
    esac
}

# The qemu that boots an ARCH guest, and the Debian package that has it.
lab_qemu() {
    case "$1" in
        amd64) echo qemu-system-x86_64 ;;
        arm64) echo qemu-system-aarch64 ;;
    esac
}
lab_qemu_package() {
    case "$1" in
        amd64) echo qemu-system-x86 ;;
        arm64) echo qemu-system-arm ;;
    esac
}

# The folders of ARCH's images in the lab cache (ready or not): image-KEY
# for amd64 (as before there were two), image-ARCH-KEY for the others.
lab_images() {
    for d in "$(lab_cache)"/image-*; do
        [ -d "$d" ] || continue
        name=${d##*/image-}
        case "$1:$name" in
            amd64:*-*) ;;
            amd64:*) echo "$d" ;;
            *:"$1"-*) echo "$d" ;;
        esac
    done
}

# The newest ready image's folder for ARCH (default: lab_arch's), or nothing.
lab_image() {
    arch=$(lab_arch "${1:-}")
    for d in $(lab_images "$arch"); do
        [ -e "$d/ready" ] && { echo "$d"; return 0; }
    done
    return 1
}

# The archives of this machine's own apt sources, one URI a line (deb822
# .sources, then sources.list and .list files), cdrom: left out.
lab_apt_uris() {
    {
        cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
            awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) print $i }'
        cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
            awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\//) { print $i; break } }'
    } | grep -v '^cdrom:'
}

# The Debian mirror: RTSCOPE_LAB_MIRROR, else the first archive of this
# machine's own apt sources that is not its security archive. No mirror
# is written into the tree: with neither, it says so and fails.
lab_mirror() {
    if [ -n "${RTSCOPE_LAB_MIRROR:-}" ]; then
        echo "$RTSCOPE_LAB_MIRROR"
        return 0
    fi
    m=$(lab_apt_uris | grep -v security | head -n1)
    [ -n "$m" ] || die "no Debian archive in this machine's apt sources: set RTSCOPE_LAB_MIRROR to one"
    echo "$m"
}

# The security archive of this machine's apt sources (for the lab's own
# apt configuration, scripts/lab/install-qemu); nothing when there is none.
lab_security_mirror() {
    lab_apt_uris | grep security | head -n1
}

# How qemu runs an ARCH guest (default amd64) here: "kvm" where hardware
# virtualization works for it, else "tcg", and why, in one line.
# RTSCOPE_LAB_ACCEL=kvm|tcg forces it.
lab_accel() {
    guest=$(lab_arch "${1:-amd64}")
    case "$guest" in amd64) machine=x86_64 ;; arm64) machine=aarch64 ;; esac
    if [ -n "${RTSCOPE_LAB_ACCEL:-}" ]; then
        echo "$RTSCOPE_LAB_ACCEL (RTSCOPE_LAB_ACCEL)"
    elif [ "$(uname -m)" != "$machine" ]; then
        echo "tcg (an $guest guest on $(uname -m): full emulation)"
    elif [ ! -w /dev/kvm ]; then
        echo "tcg (no usable /dev/kvm: full emulation)"
    elif [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ] || [ "$guest" = arm64 ]; then
        echo "kvm (hardware virtualization)"
    else
        # e.g. kvm_pvm, a nested hypervisor without VMX/SVM: stock kernels
        # stop on an emulation failure under it.
        mods=$(ls /sys/module | grep '^kvm_' | paste -sd ' ')
        echo "tcg (/dev/kvm is ${mods:-kvm} without hardware virtualization: full emulation)"
    fi
}
