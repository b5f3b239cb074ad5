#!/usr/bin/env bash
# Installs what building and testing cranecl needs on Debian 12, only what is missing:
# apt packages (clang-22 and llvm-22's opt, the ocl-icd loader and headers, clinfo, spirv-tools, a C
# compiler, python3-venv) and a Python venv at $VENV (default .venv) with pyopencl,
# numpy, pytest and mako. Uses sudo only when not root. Rust (cargo >= 1.95) must be
# installed already (https://rustup.rs); Debian 12's rustc is too old.
set -euo pipefail

cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
fi

have_pkg() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

need=()
command -v clang-22 >/dev/null 2>&1 || need+=(clang-22)
# LLVM's opt, for programs with hundreds of loops (runtime/src/build/loop_heavy.rs).
command -v opt-22 >/dev/null 2>&1 || need+=(llvm-22)
for pkg in ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-headers; do
    have_pkg "$pkg" || need+=("$pkg")
done
command -v clinfo >/dev/null 2>&1 || need+=(clinfo)
command -v spirv-val >/dev/null 2>&1 || need+=(spirv-tools)
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)

if [ ${#need[@]} -gt 0 ]; then
    echo "install-deps: apt-get install ${need[*]}"
    $SUDO apt-get update
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "install-deps: cargo not found; install Rust 1.95 or newer (https://rustup.rs)" >&2
    exit 1
fi

if [ ! -x "$VENV/bin/python" ]; then
    echo "install-deps: creating $VENV"
    python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c 'import pyopencl, numpy, pytest, mako, scipy, mpmath' >/dev/null 2>&1; then
    echo "install-deps: pip install -r conformance/python/requirements.txt"
    "$VENV/bin/pip" install -q --upgrade pip
    "$VENV/bin/pip" install -q -r conformance/python/requirements.txt
fi
