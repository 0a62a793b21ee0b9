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
DEB_ROOT := target/deb/root
MAINTAINER ?= rtscope maintainers <maintainers@users.noreply.a-seed-e938a50f.example>

.PHONY: all deps build static deb run test lab fuzz bench bench-load man clean

all: build

deps:
	@./scripts/install-deps.sh

build: deps
	$(CARGO) build --release --locked

# One statically linked binary to copy to the target board
# (target/x86_64-unknown-linux-gnu/release/rtscope on x86_64).
static: deps
	RUSTFLAGS="-C target-feature=+crt-static" $(CARGO) build --release --locked --target $(HOST)

# The Debian package, target/deb/rtscope_<version>_<arch>.deb, built with
# dpkg-deb from the static binary: man pages and shell completions come
# from the binary itself (the same clap definitions as --help); examples/
# and contrib/systemd/*.service are packaged when they exist.
DOC := $(DEB_ROOT)/usr/share/doc/rtscope
deb: static
	@rm -rf $(DEB_ROOT) $(DEB)
	install -D -m 0755 $(STATIC_BIN) $(DEB_ROOT)/usr/bin/rtscope
	$(STATIC_BIN) man $(DEB_ROOT)/usr/share/man/man1 >/dev/null
	gzip -9n $(DEB_ROOT)/usr/share/man/man1/*.1
	install -d $(DEB_ROOT)/usr/share/bash-completion/completions \
	    $(DEB_ROOT)/usr/share/zsh/vendor-completions $(DEB_ROOT)/usr/share/fish/vendor_completions.d
	$(STATIC_BIN) completions bash > $(DEB_ROOT)/usr/share/bash-completion/completions/rtscope
	$(STATIC_BIN) completions zsh > $(DEB_ROOT)/usr/share/zsh/vendor-completions/_rtscope
	$(STATIC_BIN) completions fish > $(DEB_ROOT)/usr/share/fish/vendor_completions.d/rtscope.fish
	# The README's relative links resolve: docs/, bench/ and DEVELOPERS.md
	# sit beside it as in the source tree.
	install -D -m 0644 -t $(DOC) README.md DEVELOPERS.md
	install -D -m 0644 -t $(DOC)/docs docs/*.md docs/*.json
	install -D -m 0644 -t $(DOC)/bench bench/README.md
	{ cat contrib/deb/copyright; \
	  $(CARGO) tree --locked -e normal,no-proc-macro --prefix none -f '{p} ({l})' | sed -e 1d -e 's/ (\*)$$//' -e 's/^/ /' | sort -u; \
	} > $(DOC)/copyright
	$(if $(wildcard examples),cp -R examples $(DOC)/examples)
	$(if $(wildcard contrib/systemd/*.service),install -D -m 0644 -t $(DEB_ROOT)/usr/lib/systemd/system $(wildcard contrib/systemd/*.service))
	chmod -R u+rwX,go+rX,go-w $(DEB_ROOT)
	mkdir -p $(DEB_ROOT)/DEBIAN
	cd $(DEB_ROOT) && find usr -type f -print0 | sort -z | xargs -0 md5sum > DEBIAN/md5sums
	{ echo "Package: rtscope"; \
	  echo "Version: $(VERSION)"; \
	  echo "Architecture: $(DEB_ARCH)"; \
	  echo "Maintainer: $(MAINTAINER)"; \
	  echo "Installed-Size: $$(du -sk --exclude=DEBIAN $(DEB_ROOT) | cut -f1)"; \
	  echo "Section: utils"; \
	  echo "Priority: optional"; \
	  echo "Recommends: rt-tests, stress-ng"; \
	  echo "Description: oscilloscope for real-time Linux (wake-up latency)"; \
	  echo " rtscope measures how late periodic real-time threads wake up, the way"; \
	  echo " cyclictest does, with histograms that never overflow, honest counts of"; \
	  echo " missed periods and results written as the run goes; it stores runs,"; \
	  echo " reports and compares them, applies loads, and tunes the system with a"; \
	  echo " guaranteed revert. One statically linked binary."; \
	} > $(DEB_ROOT)/DEBIAN/control
	dpkg-deb --root-owner-group --build $(DEB_ROOT) $(DEB)

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
# tests in tests/it/static_binary.rs and tests/it/package.rs (which skip,
# saying so, under a plain `cargo test`).
#
# The lab tier (docs/lab.md, tests/lab/): where qemu can run and the disk
# has room, scripts/lab/prepare builds (or reuses) the guest image of
# Debian's vanilla and PREEMPT_RT kernels and the lab's tests boot it;
# elsewhere it prints one SKIP line and the rest runs as before.
test: deps deb
	lab=$$(scripts/lab/prepare) && \
	RTSCOPE_LAB_IMAGE=$$lab RTSCOPE_STATIC_BIN=$(abspath $(STATIC_BIN)) RTSCOPE_DEB=$(abspath $(DEB)) \
	    $(CARGO) test --release --locked

# The lab alone: build (or reuse) the guest image, then boot each kernel
# with its job (tests/lab). A guest by hand: scripts/lab/run --help.
lab: deps static
	lab=$$(RTSCOPE_LAB=1 scripts/lab/prepare) && \
	RTSCOPE_LAB_IMAGE=$$lab RTSCOPE_STATIC_BIN=$(abspath $(STATIC_BIN)) \
	    $(CARGO) test --release --locked --test lab -- --nocapture

# The property tests of every importer and of the run-record reader
# (src/import/fuzz.rs), with FUZZ_CASES cases each instead of the few that
# `make test` runs: mutated fixtures and arbitrary text must never panic.
FUZZ_CASES ?= 20000
fuzz: deps
	PROPTEST_CASES=$(FUZZ_CASES) $(CARGO) test --release --locked --lib fuzz_

# Side-by-side comparison with cyclictest (minutes; not part of `make test`).
bench: build
	$(SUDO) python3 bench/vs-cyclictest.py

# Man pages from the same definitions as --help, into target/man/.
man: build
	$(BIN) man target/man
# Which load profile finds the worst case fastest here: idle, hackbench,
# stress and hell side by side, $(LOAD_POWER) each (not part of `make test`).
LOAD_POWER ?= 3m
bench-load: build
	$(SUDO) bench/load-power --duration $(LOAD_POWER)

clean:
	$(CARGO) clean
