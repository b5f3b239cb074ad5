#!/usr/bin/env python3
"""SGEMM with cl_intel_subgroup_2d_block_io against the same SGEMM with plain loads.

Both kernels use sub-groups of 16: a sub-group computes an 8x16 tile of C (one column
per work-item, eight accumulators), broadcasting A's values across the sub-group. The
block-IO kernel reads its A tile (8 rows x 16 columns) and B tile (16 x 16) with
`intel_sub_group_2d_block_read_32b_*`; the plain kernel reads the same elements with
ordinary loads. Results are checked against numpy; the figures are medians of several
runs, as GFLOP/s and the block/plain ratio (issue 8: block IO must not be slower).

Run against any platform that reports the extension (default: cranecl):
    OCL_ICD_VENDORS=$PWD/build/icd .venv/bin/python scripts/bench_block_gemm.py [--n 512]
"""
import argparse
import statistics
import time

import numpy as np
import pyopencl as cl

TILE = r"""
#define TM 8
__attribute__((intel_reqd_sub_group_size(16)))
kernel void gemm_%(name)s(global float *A, global float *B, global float *C, int N) {
  int x = get_group_id(0) * 16;
  int y = get_group_id(1) * TM;
  int l = get_sub_group_local_id();
  int pitch = N * 4;
  float acc[TM];
  for (int r = 0; r < TM; r++) acc[r] = 0.0f;
  for (int k = 0; k < N; k += 16) {
    uint a[TM];   /* a[r] = A[y + r][k + l] */
    uint b[16];   /* b[j] = B[k + j][x + l] */
    %(reads)s
    for (int j = 0; j < 16; j++) {
      float bj = as_float(b[j]);
      for (int r = 0; r < TM; r++)
        acc[r] = fma(as_float(sub_group_broadcast(a[r], j)), bj, acc[r]);
    }
  }
  for (int r = 0; r < TM; r++) C[(y + r) * N + x + l] = acc[r];
}
"""

BLOCK_READS = """
    intel_sub_group_2d_block_read_32b_8r16x1c(A, pitch, N, pitch, (int2)(k, y), a);
    intel_sub_group_2d_block_read_32b_16r16x1c(B, pitch, N, pitch, (int2)(x, k), b);
"""

PLAIN_READS = """
    for (int r = 0; r < TM; r++) a[r] = as_uint(A[(y + r) * N + k + l]);
    for (int j = 0; j < 16; j++) b[j] = as_uint(B[(k + j) * N + x + l]);
"""


def pick_device(name):
    for p in cl.get_platforms():
        if name.lower() in p.name.lower():
            return p.get_devices()[0]
    raise SystemExit(f"no platform matching {name!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--platform", default="cranecl")
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    n = a.n
    assert n % 16 == 0
    dev = pick_device(a.platform)
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    has_block = "cl_intel_subgroup_2d_block_io" in dev.extensions
    src = TILE % {"name": "plain", "reads": PLAIN_READS}
    if has_block:
        src += TILE % {"name": "block", "reads": BLOCK_READS}
    prg = cl.Program(ctx, src).build("-cl-std=CL3.0")
    rng = np.random.default_rng(1)
    A = rng.standard_normal((n, n), dtype=np.float32)
    B = rng.standard_normal((n, n), dtype=np.float32)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    mf = cl.mem_flags
    dA = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=A)
    dB = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=B)
    dC = cl.Buffer(ctx, mf.WRITE_ONLY, A.nbytes)
    results = {}
    for name in ["plain", "block"] if has_block else ["plain"]:
        k = getattr(prg, "gemm_" + name)
        k.set_args(dA, dB, dC, np.int32(n))
        times = []
        for _ in range(a.runs + 1):
            t = time.perf_counter()
            cl.enqueue_nd_range_kernel(q, k, (n, n // 8), (16, 1))
            q.finish()
            times.append(time.perf_counter() - t)
        C = np.empty_like(A)
        cl.enqueue_copy(q, C, dC)
        err = np.max(np.abs(C - ref)) / np.max(np.abs(ref))
        if err > 1e-4:
            raise SystemExit(f"{name}: wrong result (relative error {err:.2e})")
        med = statistics.median(times[1:])
        results[name] = 2 * n**3 / med / 1e9
        print(f"{dev.platform.name} {name:5s} N={n}: {results[name]:7.2f} GFLOP/s "
              f"(median of {a.runs}, checked against numpy)")
    if "block" in results:
        print(f"block / plain = {results['block'] / results['plain']:.2f}")
    else:
        print("the device does not report cl_intel_subgroup_2d_block_io")


if __name__ == "__main__":
    main()
