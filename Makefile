# rtscope: `make run` and `make test` do all the set-up on a fresh Debian
# machine (missing packages are installed, nothing else is touched).

CARGO    ?= cargo
BIN      := target/release/rtscope
DURATION ?= 30s
RESULTS  ?= results
SUDO     := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
HOST     := $(shell rustc -vV 2>/dev/null | sed -n 's/^host: //p')
# The statically linked binary `make static` builds.
STATIC_BIN := target/$(HOST)/release/rtscope
# Debian's spelling of Cargo's version (0.2.0-rc.1 becomes 0.2.0~rc.1).
VERSION  := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1 | tr - '~')
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
DEB      := target/deb/rtscope_$(VERSION)_$(DEB_ARCH).deb
MAINTAINER ?= rtscope maintainers <maintainers@users.noreply.a-seed-e938a50f.example>

.PHONY: all deps test-deps bench-deps build static deb run test lab fuzz bench bench-load man clean

all: build

# What each target installs (scripts/install-deps.sh says and never
# removes a package): building, running and packaging nothing from apt
# (cargo must be there); the benchmarks cyclictest and the loads; the
# test suite everything it runs, its servers included (README: Quick
# start). tests/it/setup.rs holds these rules.
deps:
	@./scripts/install-deps.sh build
test-deps:
	@./scripts/install-deps.sh test
bench-deps:
	@./scripts/install-deps.sh bench

build: deps
	$(CARGO) build --release --locked

# One statically linked binary to copy to the target board
# (target/x86_64-unknown-linux-gnu/release/rtscope on x86_64).
# `make test` builds its tests with the same flags and target: they reuse
# the crates whose features the tests' dev-dependencies do not change,
# and run a static rtscope.
STATIC_CARGO = RUSTFLAGS="-C target-feature=+crt-static" $(CARGO)
static: deps
	$(STATIC_CARGO) build --release --locked --target $(HOST)

# The Debian package, target/deb/rtscope_<version>_<arch>.deb, built with
# dpkg-deb from the static binary (scripts/make-deb): man pages and shell
# completions come from the binary itself (the same clap definitions as
# --help); examples/ and contrib/systemd/*.service are packaged.
deb: static
	VERSION=$(VERSION) MAINTAINER="$(MAINTAINER)" CARGO=$(CARGO) \
	    scripts/make-deb $(STATIC_BIN) $(DEB_ARCH) $(DEB)

# ARM boards (docs/arm.md): static binaries and packages for arm64
# (64-bit Raspberry Pi OS and Debian, most arm64 boards) and armhf (armv7
# hard-float: 32-bit Raspberry Pi OS on a Pi 2/3/4, older industrial
# boards), cross-built here with Debian's Rust toolchain (rustc-web,
# cargo-web and libstd-rust-web-dev:ARCH, installed by
# scripts/install-cross.sh as /usr/bin/rustc and /usr/bin/cargo; a rustup
# toolchain on PATH is not used for these). Linkers, C compilers and the
# qemu-user runner are in .cargo/config.toml. Symbols are stripped
# (CARGO_PROFILE_RELEASE_STRIP): a board gets the smallest file.
# `make static-arm64` → target/aarch64-unknown-linux-gnu/release/rtscope,
# `make deb-arm64` → target/deb/rtscope_<version>_arm64.deb; the same for
# armhf (armv7-unknown-linux-gnueabihf).
CROSS_CARGO ?= /usr/bin/cargo
CROSS_RUSTC ?= /usr/bin/rustc
ARM_ARCHS   ?= arm64 armhf
TRIPLE_arm64 := aarch64-unknown-linux-gnu
TRIPLE_armhf := armv7-unknown-linux-gnueabihf
cross = RUSTC=$(CROSS_RUSTC) CARGO_PROFILE_RELEASE_STRIP=symbols $(CROSS_CARGO)
arm_bin = target/$(TRIPLE_$(1))/release/rtscope
# Each ARM build has a target folder of its own, target/cross-ARCH, so
# that `make -j` builds it beside the x86_64 one (cargo locks a target
# folder for the whole build, and one build of this crate keeps about one
# CPU busy); its binary is then copied to target/<triple>/release/rtscope,
# where `--on` looks for it. Where Debian's standard library for a target
# is not installed (install-cross.sh could not get
# libstd-rust-web-dev:ARCH and took rust-web-src instead), cargo builds it
# from that source (-Zbuild-std, which a stable compiler allows with
# RUSTC_BOOTSTRAP=1).
comma := ,
has_std = $(wildcard /usr/lib/rustlib/$(TRIPLE_$(1))/lib)
cross_dir = target/cross-$(1)
cross_env = CARGO_TARGET_DIR=$(cross_dir) $(if $(call has_std,$(1)),,RUSTC_BOOTSTRAP=1)
std_flag = $(if $(call has_std,$(1)),,-Zbuild-std=std$(comma)panic_unwind)
cross_cargo = $(call cross_env,$(1)) $(cross) $(2) --release --locked --target $(TRIPLE_$(1)) $(call std_flag,$(1))

.PHONY: cross-deps static-arm64 static-armhf deb-arm64 deb-armhf test-arm
cross-deps:
	@./scripts/install-cross.sh $(ARM_ARCHS)

cross-deps-%:
	@./scripts/install-cross.sh $*

static-arm64 static-armhf: static-%: deps cross-deps-%
	$(call cross_cargo,$*,build)
	install -D $(call cross_dir,$*)/$(TRIPLE_$*)/release/rtscope $(call arm_bin,$*)
	@echo "$(call arm_bin,$*): $$(du -h $(call arm_bin,$*) | cut -f1)"

deb-arm64 deb-armhf: deb-%: static-% static
	VERSION=$(VERSION) MAINTAINER="$(MAINTAINER)" CARGO=$(CARGO) \
	    scripts/make-deb $(call arm_bin,$*) $* target/deb/rtscope_$(VERSION)_$*.deb $(STATIC_BIN)

# The ARM tier of `make test`, for each of $(ARM_ARCHS): the library's
# unit tests built for the board (arm-unit-build-ARCH) and run under
# qemu-user (arm-unit-ARCH; the runner in .cargo/config.toml). The
# integration tests that matter per architecture (tests/it/arch.rs) run in
# `make test`'s suite, or alone with `make test-arm`, against the ARM
# binaries and packages.
ARM_ENV = RTSCOPE_ARM_BINS="$(foreach a,$(ARM_ARCHS),$(a)=$(abspath $(call arm_bin,$(a))))" \
	RTSCOPE_ARM_DEBS="$(foreach a,$(ARM_ARCHS),$(a)=$(abspath target/deb/rtscope_$(VERSION)_$(a).deb))"
.PHONY: arm-debs arm-unit arm-unit-arm64 arm-unit-armhf arm-unit-build-arm64 arm-unit-build-armhf
arm-debs: $(foreach a,$(ARM_ARCHS),deb-$(a))
arm-unit-build-arm64 arm-unit-build-armhf: arm-unit-build-%: static-%
	$(call cross_cargo,$*,test) --lib --no-run
arm-unit-arm64 arm-unit-armhf: arm-unit-%: arm-unit-build-%
	@echo "== the library's unit tests for $(TRIPLE_$*), under qemu-user"
	$(call cross_cargo,$*,test) --lib
arm-unit: arm-debs $(foreach a,$(ARM_ARCHS),arm-unit-$(a))
test-arm: arm-unit
	$(ARM_ENV) $(STATIC_CARGO) test --release --locked --target $(HOST) --test it arch::

# The main job on sensible defaults: one FIFO-95 thread per CPU at 1 ms
# for $(DURATION), results kept in $(RESULTS)/, ending with an HTML report
# of the run.
run: build
	@mkdir -p $(RESULTS)
	$(SUDO) $(BIN) measure -D $(DURATION) --json $(RESULTS)/latest.json --histfile $(RESULTS)/latest.hist
	$(BIN) report $(RESULTS)/latest.json -o $(RESULTS)/latest.html >/dev/null
	@echo "run record: $(RESULTS)/latest.json  cyclictest histogram: $(RESULTS)/latest.hist"
	@echo "report: $(abspath $(RESULTS)/latest.html)"

# The static binary and the package are built first and checked by the
# tests in tests/it/static_binary.rs and tests/it/package.rs (which fail,
# saying so, under a plain `cargo test`, unless RTSCOPE_ALLOW_SKIP=1). The tests are built with the
# static binary's flags and target (see `static`).
#
# The suite's one skip rule (tests/common/need.rs): a test that lacks what
# it needs fails, unless RTSCOPE_ALLOW_SKIP allows that requirement (1:
# all; else a comma list of names), where it prints one SKIP line. `make
# test` allows one named exception, cgroup-v2 (README: "Tests that need
# something"): tests/it/cgroup_v2.rs's tests move the cpuset controller
# from cgroup v1 to v2 and back, which a machine whose v1 hierarchy is
# busy refuses (umount: target is busy). `RTSCOPE_ALLOW_SKIP= make test`
# allows none.
RTSCOPE_ALLOW_SKIP ?= cgroup-v2
#
# The lab tier (docs/lab.md, tests/lab/): where qemu can run and the disk
# has room, scripts/lab/prepare builds (or reuses) the guest images of
# Debian's vanilla and PREEMPT_RT kernels (amd64, and arm64 with the ARM
# tier), in the background while the rest builds (scripts/lab/background;
# the tests start once they are ready), and the lab's tests boot them; a
# failed image build fails the suite. Where the lab cannot run (not root,
# no room, no qemu for this machine) prepare says why in one SKIP line and
# the lab's tests fail, each saying what it needs: the lab never vanishes
# unnoticed. RTSCOPE_LAB=0 leaves it out on purpose: the lab's tests are
# then allowed to skip (RTSCOPE_ALLOW_SKIP=lab) and each prints a SKIP line.
#
# `make test` runs the suite in chains side by side (make -j4), each
# starting as soon as what it needs is built, so that the tests of one
# architecture run while another still builds (docs/lab.md says what each
# costs):
#   suite-host       the x86_64 static build, its package and the tests'
#                    build; then the library's unit tests, tests/it but
#                    its ARM part, and the amd64 lab once its image is ready
#                    (every test binary runs, whichever fails);
#   suite-arch       the arm64 and armhf builds and packages and the
#                    library's unit tests built for each; then tests/it's
#                    ARM part (tests/it/arch.rs) against them, and once
#                    tests/it has run, the ARM unit tests under qemu-user;
#   suite-lab-arm64  the arm64 build; then the arm64 lab once its image is
#                    ready and tests/it and the ARM unit tests have run
#                    (guests run one at a time across the chains).
# Neither lab starts before tests/it and the ARM unit tests have run
# (markers their chains leave, passed or not; a lab waits for them at most
# 30 min): an emulated guest wants both CPUs. A chain that fails fails
# `make test`; the others run to their end.
LAB_ARCHS = amd64 $(filter arm64,$(ARM_ARCHS))
LAB_ARM64 = $(if $(filter arm64,$(ARM_ARCHS)),$(1))
TEST_ENV = RTSCOPE_ALLOW_SKIP=$(RTSCOPE_ALLOW_SKIP) \
	RTSCOPE_STATIC_BIN=$(abspath $(STATIC_BIN)) RTSCOPE_DEB=$(abspath $(DEB)) \
	$(call LAB_ARM64,RTSCOPE_STATIC_BIN_ARM64=$(abspath $(call arm_bin,arm64))) $(ARM_ENV)
SUITE = $(STATIC_CARGO) test --release --locked --target $(HOST)
# The lab's tests, after TEST_ENV: RTSCOPE_LAB=0 allows them to skip.
LAB_ENV = $(if $(filter 0,$(RTSCOPE_LAB)),RTSCOPE_ALLOW_SKIP=lab)
# Each chain's start and end, with the time, in make test's output.
said = @echo "== $(1) $$(date -u +%H:%M:%S)"
.PHONY: lab-start test-build-host suite-host suite-arch suite-lab-arm64
lab-start: test-deps $(if $(ARM_ARCHS),cross-deps)
	scripts/lab/background start $(LAB_ARCHS)
test-build-host: static
	$(SUITE) --no-run
# The labs' emulated guests take both CPUs: they start once tests/it has
# run (IT_DONE, whether it passed or not), so that no test of it shares
# the machine with a guest; the arm64 lab waits for it at most 30 min.
IT_DONE = target/.suite-it-done
ARM_DONE = $(if $(ARM_ARCHS),target/.suite-arm-unit-done)
# wait_for(files): until each exists, at most 30 min.
wait_for = w=0; while ! ls $(1) >/dev/null 2>&1 && [ $$w -lt 1800 ]; do sleep 5; w=$$((w + 5)); done
suite-host: deb test-build-host
	$(call said,suite-host: tests built)
	$(TEST_ENV) $(SUITE) --no-fail-fast --lib --bins --test it -- --skip arch::; \
	    s=$$?; touch $(IT_DONE); exit $$s
	$(SUITE) --doc
	$(call said,suite-host: the amd64 lab next$(if $(ARM_DONE), once the ARM unit tests have run))
	@$(call wait_for,$(ARM_DONE))
	lab=$$(scripts/lab/background wait amd64) && \
	RTSCOPE_LAB_IMAGE=$$lab $(TEST_ENV) $(LAB_ENV) $(SUITE) --test lab -- --skip arm64::
	$(call said,suite-host: done)
suite-arch: deb test-build-host $(foreach a,$(ARM_ARCHS),deb-$(a) arm-unit-build-$(a))
	$(call said,suite-arch: ARM builds$(comma) packages and unit tests made)
	$(TEST_ENV) $(SUITE) --test it -- arch::; s=$$?; \
	$(call wait_for,$(IT_DONE)); \
	$(foreach a,$(ARM_ARCHS),echo "== the library's unit tests for $(TRIPLE_$(a)), under qemu-user $$(date -u +%H:%M:%S)"; \
	    $(call cross_cargo,$(a),test) --lib || s=1; ) \
	touch $(ARM_DONE); exit $$s
	$(call said,suite-arch: done)
suite-lab-arm64: static-arm64 test-build-host
	$(call said,suite-lab-arm64: arm64 build made; tests/it$(comma) the ARM unit tests and the arm64 lab image next)
	@$(call wait_for,$(IT_DONE) $(ARM_DONE))
	lab_arm64=$$(scripts/lab/background wait arm64) && \
	RTSCOPE_LAB_IMAGE_ARM64=$$lab_arm64 $(TEST_ENV) $(LAB_ENV) $(SUITE) --test lab -- arm64::
	$(call said,suite-lab-arm64: done)
test: test-deps lab-start
	$(call said,make test: set-up done)
	rm -f $(IT_DONE) $(ARM_DONE)
	$(MAKE) -k -j4 --output-sync=line suite-host \
	    $(if $(ARM_ARCHS),suite-arch) \
	    $(call LAB_ARM64,suite-lab-arm64)
	$(call said,make test: done)

# The lab alone: build (or reuse) the guest image, then boot each kernel
# with its job (tests/lab). A guest by hand: scripts/lab/run --help.
lab: test-deps static static-arm64
	lab=$$(RTSCOPE_LAB=1 scripts/lab/prepare) && \
	lab_arm64=$$(RTSCOPE_LAB=1 scripts/lab/prepare arm64) && \
	RTSCOPE_LAB_IMAGE=$$lab RTSCOPE_STATIC_BIN=$(abspath $(STATIC_BIN)) \
	RTSCOPE_LAB_IMAGE_ARM64=$$lab_arm64 RTSCOPE_STATIC_BIN_ARM64=$(abspath $(call arm_bin,arm64)) \
	    $(STATIC_CARGO) test --release --locked --target $(HOST) --test lab -- --nocapture

# The property tests of every importer and of the run-record reader
# (src/import/fuzz.rs), with FUZZ_CASES cases each instead of the few that
# `make test` runs: mutated fixtures and arbitrary text must never panic.
FUZZ_CASES ?= 20000
fuzz: deps
	PROPTEST_CASES=$(FUZZ_CASES) $(CARGO) test --release --locked --lib fuzz_

# Side-by-side comparison with cyclictest (minutes; not part of `make test`).
bench: bench-deps build
	$(SUDO) python3 bench/vs-cyclictest.py

# Man pages from the same definitions as --help, into target/man/.
man: build
	$(BIN) man target/man
# Which load profile finds the worst case fastest here: idle, hackbench,
# stress and hell side by side, $(LOAD_POWER) each (not part of `make test`).
LOAD_POWER ?= 3m
bench-load: bench-deps build
	$(SUDO) bench/load-power --duration $(LOAD_POWER)

clean:
	$(CARGO) clean
