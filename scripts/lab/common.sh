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

# The newest ready image's folder, or nothing.
lab_image() {
    for d in "$(lab_cache)"/image-*; do
        [ -e "$d/ready" ] && { echo "$d"; return 0; }
    done
    return 1
}

# How qemu runs here: "kvm" where hardware virtualization works, else
# "tcg", and why, in one line. RTSCOPE_LAB_ACCEL=kvm|tcg forces it.
lab_accel() {
    if [ -n "${RTSCOPE_LAB_ACCEL:-}" ]; then
        echo "$RTSCOPE_LAB_ACCEL (RTSCOPE_LAB_ACCEL)"
    elif [ ! -w /dev/kvm ]; then
        echo "tcg (no usable /dev/kvm: full emulation)"
    elif [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; then
        echo "kvm (hardware virtualization)"
    else
        # e.g. kvm_pvm, a nested hypervisor without VMX/SVM: stock kernels
        # stop on an emulation failure under it.
        mods=$(ls /sys/module | grep '^kvm_' | paste -sd ' ')
        echo "tcg (/dev/kvm is ${mods:-kvm} without hardware virtualization: full emulation)"
    fi
}
