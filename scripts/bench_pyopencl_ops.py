"""Times everyday pyopencl operations on the first OpenCL platform the ICD loader
offers (point OCL_ICD_VENDORS at one driver): elementwise kernels, array arithmetic,
reductions, clmath, complex numbers, scan and clrandom on 2^24 elements. Each
operation is checked against numpy once, then timed (wall clock to q.finish(),
median of 7 after a warm-up). Pass operation names to run only those.

    OCL_ICD_VENDORS=$PWD/build/icd .venv/bin/python scripts/bench_pyopencl_ops.py
"""
import sys
import time

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.clmath as clm
import pyopencl.clrandom as clr
from pyopencl.elementwise import ElementwiseKernel

N = 1 << 24


def main():
    ctx = cl.Context(cl.get_platforms()[0].get_devices())
    q = cl.CommandQueue(ctx)
    rng = np.random.default_rng(7)
    xh = rng.random(N, dtype=np.float32)
    yh = rng.random(N, dtype=np.float32)
    ih = rng.integers(0, 100, N).astype(np.int32)
    dh = rng.random(N)
    ch = (rng.random(N) + 1j * rng.random(N)).astype(np.complex64)
    x, y = cla.to_device(q, xh), cla.to_device(q, yh)
    xi, xd, xc = cla.to_device(q, ih), cla.to_device(q, dh), cla.to_device(q, ch)
    z = cla.empty_like(x)
    axpy = ElementwiseKernel(ctx, "float a, float *x, float *y, float *z",
                             "z[i] = a*x[i] + y[i]", "axpy")
    gen = clr.PhiloxGenerator(ctx)

    def elementwise():
        axpy(np.float32(2), x, y, z)
        return z

    # (name, operation, numpy reference or None, relative tolerance)
    ops = [
        ("elementwise axpy", elementwise, lambda: 2 * xh + yh, 1e-6),
        ("2*x+y", lambda: 2 * x + y, lambda: 2 * xh + yh, 1e-6),
        ("x*x f64", lambda: xd * xd, lambda: dh * dh, 1e-15),
        # A Python float is a double kernel argument: converts each element and back.
        ("x - 0.5", lambda: x - 0.5, lambda: xh - 0.5, 1e-6),
        ("sum f32", lambda: cla.sum(x), lambda: xh.sum(dtype=np.float64), 1e-4),
        ("dot f32", lambda: cla.dot(x, y), lambda: np.dot(xh.astype(np.float64), yh), 1e-4),
        ("max f32", lambda: cla.max(x), lambda: xh.max(), 0),
        ("sum f64", lambda: cla.sum(xd), lambda: dh.sum(), 1e-12),
        ("clmath.sin", lambda: clm.sin(x), lambda: np.sin(xh), 1e-6),
        ("clmath.exp", lambda: clm.exp(x), lambda: np.exp(xh), 1e-6),
        ("complex mul", lambda: xc * xc, lambda: ch * ch, 1e-6),
        ("abs complex", lambda: abs(xc), lambda: np.abs(ch), 1e-6),
        ("cumsum i32", lambda: cla.cumsum(xi), lambda: np.cumsum(ih, dtype=np.int32), 0),
        ("rand f32", lambda: gen.uniform(q, (N,), np.float32), None, 0),
        ("where", lambda: cla.if_positive(x - 0.5, x, y),
         lambda: np.where(xh - 0.5 > 0, xh, yh), 0),
    ]
    only = sys.argv[1:]
    for name, op, ref, tol in ops:
        if only and name not in only:
            continue
        got = op()
        q.finish()
        if ref is not None:
            want = ref()
            g = got.get() if hasattr(got, "get") else got
            assert np.allclose(g, want, rtol=tol, atol=0), name
        times = []
        for _ in range(7):
            t = time.perf_counter()
            op()
            q.finish()
            times.append(time.perf_counter() - t)
        times.sort()
        print("%-18s %8.2f ms" % (name, times[3] * 1e3), flush=True)


if __name__ == "__main__":
    main()
