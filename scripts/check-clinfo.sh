#!/usr/bin/env bash
# Runs clinfo against the driver registered in $OCL_ICD_VENDORS and fails unless the
# output lists the platform (name containing $CRANECL_TEST_PLATFORM, default
# "cranecl") and contains no error lines (clinfo prints "<file:line: query : error N>"
# or "<error: ...>" for a failed query).
set -euo pipefail

want=${CRANECL_TEST_PLATFORM:-cranecl}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! clinfo > "$out" 2>&1; then
    cat "$out"
    echo "check-clinfo: clinfo exited with an error" >&2
    exit 1
fi
if ! grep -q -i "^  Platform Name .*$want" "$out"; then
    cat "$out"
    echo "check-clinfo: platform $want not listed (OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-unset})" >&2
    exit 1
fi
if grep -n -E '<error|: error -?[0-9]+>|CL_INVALID_|CL_OUT_OF_|Invalid device type' "$out"; then
    echo "check-clinfo: clinfo reported errors (lines above)" >&2
    exit 1
fi
devices=$(grep -c "^  Device Name" "$out" || true)
echo "check-clinfo: OK ($want listed, $devices device line(s), no errors)"
