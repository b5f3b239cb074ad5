# cranecl: quick start, tests and checks.
#
#   make demo        install what is missing, build the driver, run clinfo, the C
#                    hello program and a pyopencl demo against it
#   make test        install what is missing, build, run every test suite (cargo
#                    tests incl. conformance, pytest, clinfo checks)
#   make icd         build the release driver and write build/icd/cranecl.icd
#   make leak-check  valgrind over conformance/c/hello.c (needs valgrind)
#   make fmt-check   rustfmt in check mode
#   make clippy      clippy on every crate and target, warnings are errors
#
# Use the driver from any application with: OCL_ICD_VENDORS=$(PWD)/build/icd
# CARGO_TARGET_DIR is honoured (default: target/ in the repository).

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := demo

ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
CARGO ?= cargo
CARGO_TARGET_DIR ?= $(ROOT)/target
export CARGO_TARGET_DIR

VENV ?= $(ROOT)/.venv
PYTHON := $(VENV)/bin/python
LIB := $(CARGO_TARGET_DIR)/release/libcranecl.so
ICD_DIR := $(ROOT)/build/icd
HELLO := $(ROOT)/build/hello

# What every run against the built driver needs: the loader sees only cranecl.
DRIVER_ENV := OCL_ICD_VENDORS=$(ICD_DIR) CRANECL_LIB=$(LIB)

.PHONY: demo test deps driver icd hello cargo-test pytest clinfo-check leak-check fmt-check clippy clean-build

deps:
	VENV=$(VENV) $(ROOT)/scripts/install-deps.sh

driver:
	$(CARGO) build --release -p cranecl-icd

icd: driver
	$(ROOT)/scripts/write-icd.sh $(LIB) $(ICD_DIR)

$(HELLO): $(ROOT)/conformance/c/hello.c
	mkdir -p $(dir $@)
	cc -std=c11 -Wall -Wextra -O1 -o $@ $< -lOpenCL

hello: $(HELLO)

demo: deps icd hello
	@echo "== clinfo (OCL_ICD_VENDORS=$(ICD_DIR))"
	$(DRIVER_ENV) clinfo
	@echo "== C program: conformance/c/hello.c"
	$(DRIVER_ENV) $(HELLO)
	@echo "== pyopencl program: scripts/demo.py"
	$(DRIVER_ENV) $(PYTHON) $(ROOT)/scripts/demo.py

# Every suite runs even if an earlier one fails; the target fails if any did.
test: deps icd hello
	@status=0; \
	$(MAKE) --no-print-directory cargo-test || status=1; \
	$(MAKE) --no-print-directory pytest || status=1; \
	$(MAKE) --no-print-directory clinfo-check || status=1; \
	echo "== C program: conformance/c/hello.c"; \
	$(DRIVER_ENV) $(HELLO) || status=1; \
	if [ $$status -ne 0 ]; then echo "== make test: FAILED (see above)"; exit 1; fi; \
	echo "== make test: all suites passed"

cargo-test:
	@echo "== cargo test --workspace (conformance through OCL_ICD_VENDORS=$(ICD_DIR))"
	$(DRIVER_ENV) $(CARGO) test --workspace --no-fail-fast
	@echo "== device-side enqueue opt-out (CRANECL_DEVICE_ENQUEUE=0)"
	CRANECL_DEVICE_ENQUEUE=0 $(DRIVER_ENV) $(CARGO) test -p cranecl-conformance --no-fail-fast \
		--test device_enqueue

pytest:
	@echo "== pytest conformance/python"
	$(DRIVER_ENV) $(PYTHON) -m pytest -q -p no:cacheprovider $(ROOT)/conformance/python

clinfo-check:
	@echo "== clinfo checks"
	$(DRIVER_ENV) $(ROOT)/scripts/check-clinfo.sh

# Memory check of a whole application run (needs valgrind; not part of `make test`).
# Only definite leaks fail: the driver keeps its worker pool and JIT for the process.
leak-check: icd hello
	@command -v valgrind >/dev/null || { echo "leak-check needs valgrind: apt-get install valgrind" >&2; exit 1; }
	$(DRIVER_ENV) valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=1 $(HELLO)

fmt-check:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

clean-build:
	rm -rf $(ROOT)/build
