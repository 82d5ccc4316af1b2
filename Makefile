# quench: every target sets up what it needs (virtual environment, extension build) itself.
# `make reproduce` runs the main job (every seed experiment, into results/REPORT.md);
# `make test` runs every test, Rust and Python.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.tools-stamp
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(VENV))/bin:$(PATH)

.PHONY: all build reproduce demo test test-rust test-python tshark chromium bench lint clean

all: build

$(STAMP):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "maturin>=1.5,<2"
	touch $(STAMP)

# Builds the extension (incrementally) and installs quench with its Python dependencies.
build: $(STAMP)
	$(VENV)/bin/maturin develop --release --extras test --quiet

reproduce: build
	$(VENV)/bin/quench reproduce all --out results

demo: build
	$(VENV)/bin/quench demo --out results/demo

test: test-rust test-python

test-rust:
	cargo test -p quench-core --release

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
	bash benchmarks/setup_ns3.sh
	$(PY) benchmarks/bench_dumbbell.py

lint: build
	$(PY) -m pip install --quiet ruff
	$(VENV)/bin/ruff check python tests benchmarks studies
	$(VENV)/bin/ruff format --check python tests benchmarks studies
	cargo fmt --all -- --check
	cargo clippy -p quench-core --all-targets -- -D warnings
	cargo clippy -p quench-py -- -D warnings

clean:
	rm -rf $(VENV) target results
