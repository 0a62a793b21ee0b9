#!/bin/sh
# Install what one of rtscope's make targets needs, only when missing:
#   install-deps.sh build   make build, static, deb, run, fuzz, man and the
#                           ARM builds: nothing from apt (the build needs
#                           cargo, and `make deb` only dpkg-deb, gzip and
#                           bash, which every Debian system has)
#   install-deps.sh bench   make bench, bench-load: cyclictest and the loads
#   install-deps.sh test    make test: everything the suite runs (below)
#   install-deps.sh --list SET   print SET's packages, install nothing
# RTSCOPE_PACKAGES, when set, is the list instead (scripts/lab/prepare).
# Idempotent: a second run installs nothing. Debian/Ubuntu (apt-get).
# It says what it installs, and never removes a package: where apt would
# remove one (a conflict with what the user has), it installs nothing and
# names it.
set -eu

# Debian packages: rt-tests (cyclictest, hackbench: the reference and a
# load), stress-ng (loads), strace (the hot-path syscall test), util-linux
# (taskset and setpriv: the tune tests; unshare: the static-binary test),
# mount (its bind mounts), chromium (the report tests render and print
# the HTML report headless; tests/it/browser.rs drives it through the
# DevTools protocol), poppler-utils (pdftotext: the report test
# reads where the printed comparison's columns fall). prometheus: the
# --metrics test starts one on loopback (its own config and storage, no
# system service) and queries it. postgresql (15 on Debian 12):
# tests/it/postgres.rs initialises and starts its own cluster in a
# temporary directory (initdb, pg_ctl); no system service is used.
# openssh-server, openssh-client: the remote runs (`rtscope --on ssh://…`)
# drive a board with the ssh client, and tests/it/remote.rs starts its own
# sshd on loopback (tests/it/sshd.rs: its own config, keys and free port)
# as that board; the system's sshd is neither started nor used (see
# policy-rc.d below). The servers are the test suite's alone: building,
# running and packaging rtscope never install them.
BUILD=""
BENCH="rt-tests stress-ng"
TEST="rt-tests stress-ng strace util-linux mount chromium poppler-utils prometheus postgresql openssh-server openssh-client"

list=""
if [ "${1:-}" = "--list" ]; then
    list=1
    shift
fi
case "${1:-}" in
build) set_packages=$BUILD ;;
bench) set_packages=$BENCH ;;
test) set_packages=$TEST ;;
*)
    echo "install-deps: usage: install-deps.sh [--list] build|bench|test" >&2
    exit 2
    ;;
esac
PACKAGES="${RTSCOPE_PACKAGES-$set_packages}"
if [ -n "$list" ]; then
    for p in $PACKAGES; do echo "$p"; done
    exit 0
fi

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
    # One apt at a time (apt-get runs without the lock's descriptor, so
    # nothing it starts keeps it): make test installs the lab's and the cross
    # toolchain's packages from scripts that may run side by side.
    lock=${RTSCOPE_APT_LOCK:-/tmp/rtscope-apt.lock}
    exec 9>>"$lock"
    flock -w 900 9 || { echo "install-deps: another apt of rtscope's held $lock for 15 minutes" >&2; exit 2; }
    # A mirror caught mid-sync serves an index that does not match its
    # Release file (seen here: bookworm-security's armhf index, once armhf
    # is added for the cross toolchain); apt-get update then fails though
    # it read every other index. Install from what it read: the install
    # itself fails, naming the package, if one is still missing.
    if ! $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq 9>&-; then
        echo "install-deps: apt-get update reported errors (above); installing from the lists it read" >&2
    fi
    # Never remove what the user has: apt-get says which packages it would
    # remove (a conflict), and then nothing is installed.
    removed=$(LC_ALL=C apt-get install -s --no-install-recommends $missing 9>&- 2>/dev/null |
        sed -n 's/^Remv \([^ ]*\).*/\1/p' | tr '\n' ' ')
    if [ -n "$removed" ]; then
        echo "install-deps: installing$missing would remove $removed(installed here); nothing was installed: install them by hand, choosing what to keep" >&2
        exit 2
    fi
    # Installing a server package (openssh-server) starts its service
    # through invoke-rc.d where there is no systemd (a container): a
    # policy-rc.d that answers 101 ("not allowed") forbids it. Ours lives
    # only for this apt-get and goes on any exit; one already there (the
    # system's, a container image's) is left alone.
    policy=${RTSCOPE_POLICY_RC_D:-/usr/sbin/policy-rc.d}
    ours=""
    if [ ! -e "$policy" ]; then
        ours=1
        trap '$SUDO rm -f "$policy"' EXIT
        trap 'exit 130' INT
        trap 'exit 143' TERM
        $SUDO sh -c 'printf "#!/bin/sh\nexit 101\n" >"$1" && chmod 755 "$1"' sh "$policy"
    fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-remove --no-install-recommends $missing 9>&- >/dev/null
    echo "install-deps: installed$missing"
    if [ -n "$ours" ]; then
        $SUDO rm -f "$policy"
        trap - EXIT INT TERM
    fi
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "install-deps: cargo (Rust) is missing: install it with rustup (https://rustup.rs), then re-run" >&2
    exit 2
fi
