# quench: every target sets up what it needs (virtual environment, extension build) itself.
# `make reproduce` runs the main job (every seed experiment, into results/REPORT.md);
# `make test` runs every test, Rust and Python.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.tools-stamp
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(VENV))/bin:$(PATH)
# The interpreter maturin builds the extension for, named as maturin names it to cargo: pyo3's
# build script reruns when either differs, so `cargo test -p quench-py` (make test-rust) would
# otherwise rebuild pyo3 and the extension crate after every `maturin develop`, and back.
export PYO3_PYTHON := $(abspath $(VENV))/bin/python
export PYO3_ENVIRONMENT_SIGNATURE := $(shell $(PYTHON) -c 'import platform, sys; \
  print(f"{platform.python_implementation().lower()}-{sys.version_info[0]}.{sys.version_info[1]}-64bit")')
# pip, run by maturin to install the Python dependencies, says only what goes wrong.
export PIP_QUIET := 1

.PHONY: all build reproduce demo notebooks test test-rust test-python tshark chromium bench docs lint clean

all: build

$(STAMP):
	@echo "build: creating $(VENV) with pip and maturin (under a minute)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "maturin>=1.5,<2"
	touch $(STAMP)

# Builds the extension (incrementally) and installs quench with its Python dependencies;
# cargo prints each crate it compiles (about 150 the first time), then the elapsed time.
build: $(STAMP)
	@echo "build: compiling the Rust extension (release) and installing quench into $(VENV)"
	@start=$$(date +%s); $(VENV)/bin/maturin develop --release --extras test && \
	  echo "build: done in $$(( $$(date +%s) - start )) s"

reproduce: build
	$(VENV)/bin/quench reproduce all --out results

demo: build
	$(VENV)/bin/quench demo --out results/demo

# The tutorial notebooks in JupyterLab (installed into the venv the first time); their figures
# show inline. They are stored without outputs: clear them before committing a change.
notebooks: build
	@$(PY) -c "import jupyterlab" 2>/dev/null || $(PY) -m pip install --quiet jupyterlab
	$(VENV)/bin/jupyter lab examples

test: test-rust test-python

# The engine's tests run twice: optimised, as users run it, and with debug assertions on, so
# that the invariants the engine asserts (e.g. no event queued in the past) are checked too.
# The bindings' tests build pyo3 for PYO3_PYTHON, the interpreter of $(VENV): it must exist
# first, on a fresh clone too.
test-rust: $(STAMP)
	cargo test -p quench-core --release
	cargo test -p quench-core
	cargo test -p quench-py --release --lib

test-python: build tshark chromium
	$(PY) -m pytest -q tests

# tshark cross-checks our pcap files; install it when we can (root with apt), else those
# tests skip and the dpkt-based ones still run.
tshark:
	@command -v tshark >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark) >/dev/null 2>&1; } || \
	  echo "tshark unavailable: its cross-check tests will be skipped"

# Headless Chromium opens REPORT.html in tests/test_report_html.py; same pattern (about 35 s
# with apt on this VM), else that test skips.
chromium:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1; } || \
	  echo "chromium unavailable: the HTML report test will be skipped"

bench: build
	$(PY) -m quench.cli ns3 --setup
	$(PY) benchmarks/bench_dumbbell.py
	$(PY) benchmarks/heap_events.py
	$(PY) benchmarks/bench_start.py
	$(PY) benchmarks/bench_fabric.py
	$(PY) benchmarks/compare_htsim_fct.py --seeds 1,2,3

# The API reference, built with pdoc from the docstrings into docs/api/ (git-ignored); fails when
# pdoc warns (tests/test_api_docs.py runs the same build in `make test`).
docs: build
	rm -rf docs/api
	$(PY) tests/build_api_docs.py docs/api

# Every check runs, and the ones that failed are listed at the end. Needs no extension build:
# ruff reads the sources, clippy checks the crates itself (debug profile, beside the release
# build). rustfmt and clippy are added with rustup when the toolchain lacks them.
LINT_PY := python tests benchmarks studies
LINT_CHECKS := "$(VENV)/bin/ruff check $(LINT_PY)" "$(VENV)/bin/ruff format --check $(LINT_PY)" \
	"cargo fmt --all -- --check" "cargo clippy -p quench-core --all-targets -- -D warnings" \
	"cargo clippy -p quench-py -- -D warnings"

lint: $(STAMP)
	$(PY) -m pip install --quiet ruff
	@for c in fmt:rustfmt clippy:clippy; do cargo $${c%%:*} --version >/dev/null 2>&1 || rustup component add $${c#*:} || \
	  { echo "lint: cargo $${c%%:*} is missing; install the $${c#*:} component of your Rust toolchain" >&2; exit 1; }; done
	@failed=; for check in $(LINT_CHECKS); do echo "$$check"; $$check || failed="$$failed\n  $$check"; done; \
	  if [ -n "$$failed" ]; then printf "lint FAILED:$$failed\n" >&2; exit 1; fi

clean:
	rm -rf $(VENV) target results
