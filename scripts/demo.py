#!/usr/bin/env python3
"""cranecl demo: a real pyopencl program on the cranecl CPU device.

Finds the platform (name containing $CRANECL_TEST_PLATFORM, default "cranecl"),
builds an OpenCL C kernel from source, runs it, checks the result against numpy and
prints what happened. Exit status 0 only if the result matches.

Run through `make demo`, or by hand:
    OCL_ICD_VENDORS=build/icd .venv/bin/python scripts/demo.py
"""

import os
import sys
import time

import numpy as np
import pyopencl as cl

KERNEL = r"""
// Per work-group sums of a*x + y (a local-memory tree reduction with barriers),
// and the element-wise result itself.
kernel void axpy_and_partial_sums(global const float* x, global const float* y,
                                  global float* out, global float* partial,
                                  const float a, local float* scratch) {
    size_t i = get_global_id(0), l = get_local_id(0);
    float v = a * x[i] + y[i];
    out[i] = v;
    scratch[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (l < s) scratch[l] += scratch[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) partial[get_group_id(0)] = scratch[0];
}
"""


def find_device(wanted):
    seen = []
    for platform in cl.get_platforms():
        seen.append(platform.name)
        if wanted.lower() in platform.name.lower():
            return platform, platform.get_devices()[0]
    sys.exit(
        f"demo: no OpenCL platform named like {wanted!r} (found {seen}); "
        f"OCL_ICD_VENDORS={os.environ.get('OCL_ICD_VENDORS')!r}"
    )


def main():
    platform, device = find_device(os.environ.get("CRANECL_TEST_PLATFORM", "cranecl"))
    print(f"platform : {platform.name} ({platform.version})")
    print(f"device   : {device.name}, {device.max_compute_units} compute units, {device.version}")
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx)

    start = time.perf_counter()
    program = cl.Program(ctx, KERNEL).build()
    build_ms = (time.perf_counter() - start) * 1e3
    kernel = program.axpy_and_partial_sums

    n, local = 1 << 20, 128
    rng = np.random.default_rng(2024)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    a = np.float32(2.5)
    mf = cl.mem_flags
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    yb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=y)
    ob = cl.Buffer(ctx, mf.WRITE_ONLY, x.nbytes)
    pb = cl.Buffer(ctx, mf.WRITE_ONLY, (n // local) * 4)
    kernel.set_args(xb, yb, ob, pb, a, cl.LocalMemory(local * 4))

    start = time.perf_counter()
    cl.enqueue_nd_range_kernel(queue, kernel, (n,), (local,))
    queue.finish()
    run_ms = (time.perf_counter() - start) * 1e3

    out = np.empty_like(x)
    partial = np.empty(n // local, dtype=np.float32)
    cl.enqueue_copy(queue, out, ob)
    cl.enqueue_copy(queue, partial, pb)
    queue.finish()

    want = a * x + y
    want_partial = want.reshape(-1, local).astype(np.float64).sum(axis=1)
    elem_err = float(np.max(np.abs(out - want)))
    sum_err = float(np.max(np.abs(partial - want_partial)))
    print(f"kernel   : built in {build_ms:.1f} ms, ran {n} work-items in {run_ms:.1f} ms")
    print(f"result   : sum = {partial.sum(dtype=np.float64):.4f} (numpy {want_partial.sum():.4f})")
    print(f"check    : max element error {elem_err:.2e}, max group-sum error {sum_err:.2e}")
    ok = elem_err <= 1e-5 and sum_err <= 1e-3
    print("PASS" if ok else "FAIL: results differ from numpy")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
