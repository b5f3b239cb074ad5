#!/bin/sh
# Regenerates the seed modules of the SPIR-V mutation test (jit/tests/seeds/*.spv)
# from the OpenCL C next to them, with clang's SPIR-V backend and the driver's
# header, as clBuildProgram would. The .spv files are checked in so that the seeded
# mutations (and so the test's results) do not change with the installed clang.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
clang=${CRANECL_TEST_CLANG:-clang-22}
ext="+cl_khr_byte_addressable_store,+cl_khr_global_int32_base_atomics,+cl_khr_global_int32_extended_atomics,+cl_khr_local_int32_base_atomics,+cl_khr_local_int32_extended_atomics,+cl_khr_fp64,+cl_khr_subgroups,+cl_intel_subgroups,+cl_intel_required_subgroup_size,+__opencl_c_int64,+__opencl_c_fp64,+__opencl_c_subgroups,+__opencl_c_work_group_collective_functions"
for cl in "$here"/jit/tests/seeds/*.cl; do
    "$clang" -cc1 -triple spirv64-unknown-unknown -O2 -cl-std=CL3.0 "-cl-ext=$ext" \
        -finclude-default-header -include "$here/runtime/src/build/cranecl.h" \
        -mllvm -spirv-ext=+SPV_INTEL_subgroups \
        -emit-obj -o "${cl%.cl}.spv" "$cl"
    echo "${cl%.cl}.spv"
done
