#!/usr/bin/env bash
# Writes an ICD registration folder for a built libcranecl.so, so that an ICD loader
# finds the driver with OCL_ICD_VENDORS=<folder> (no root, nothing in /etc).
# Usage: scripts/write-icd.sh <path/to/libcranecl.so> <folder>
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 <path/to/libcranecl.so> <folder>" >&2
    exit 2
fi
lib=$(realpath "$1")
dir=$2
if [ ! -f "$lib" ]; then
    echo "write-icd: $lib does not exist (build it with: cargo build --release -p cranecl-icd)" >&2
    exit 1
fi
mkdir -p "$dir"
printf '%s\n' "$lib" > "$dir/cranecl.icd"
echo "write-icd: $dir/cranecl.icd -> $lib"
