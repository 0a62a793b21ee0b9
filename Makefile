# rtscope: `make run` and `make test` do all the set-up on a fresh Debian
# machine (missing packages are installed, nothing else is touched).

CARGO    ?= cargo
BIN      := target/release/rtscope
DURATION ?= 30s
RESULTS  ?= results
SUDO     := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

.PHONY: all deps build static run test fuzz bench bench-load man clean

all: build

deps:
	@./scripts/install-deps.sh

build: deps
	$(CARGO) build --release --locked

# One statically linked binary to copy to the target board
# (target/x86_64-unknown-linux-gnu/release/rtscope on x86_64).
static: deps
	RUSTFLAGS="-C target-feature=+crt-static" $(CARGO) build --release --locked --target $$(rustc -vV | sed -n 's/^host: //p')

# The main job on sensible defaults: one FIFO-95 thread per CPU at 1 ms
# for $(DURATION), results kept in $(RESULTS)/, ending with an HTML report
# of the run.
run: build
	@mkdir -p $(RESULTS)
	$(SUDO) $(BIN) measure -D $(DURATION) --json $(RESULTS)/latest.json --histfile $(RESULTS)/latest.hist
	$(BIN) report $(RESULTS)/latest.json -o $(RESULTS)/latest.html >/dev/null
	@echo "run record: $(RESULTS)/latest.json  cyclictest histogram: $(RESULTS)/latest.hist"
	@echo "report: $(abspath $(RESULTS)/latest.html)"

test: deps
	$(CARGO) test --release --locked

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
