"""pyopencl.elementwise: ElementwiseKernel over every scalar dtype, odd sizes, ranges
and strided or reversed slices, build options, preambles, arrays at an offset,
vector types, several outputs, divergent per-item work, and the array helpers built
on it (take/put, if_positive, maximum/minimum), compared with numpy."""

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pytest
from pyopencl import cltypes
from pyopencl.elementwise import ElementwiseKernel
from pyopencl.tools import dtype_to_ctype

from conftest import has_fp64, require

SCALAR_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
                 np.float32, np.float64]
SIZES = [0, 1, 7, 127, 128, 129, 1021, 65_537, 1 << 21]


def need(device, dtype):
    if np.dtype(dtype) == np.float64:
        require(has_fp64(device), "cl_khr_fp64")


def sample(rng, n, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, endpoint=True, dtype=dtype)
    return rng.uniform(-100, 100, n).astype(dtype)


@pytest.mark.parametrize("dtype", SCALAR_DTYPES)
def test_linear_combination_every_dtype(ctx, queue, device, rng, dtype):
    # z = a*x + b*y with wrapping integer arithmetic in the element type
    need(device, dtype)
    t = dtype_to_ctype(dtype)
    knl = ElementwiseKernel(ctx, f"{t} a, {t} *x, {t} b, {t} *y, {t} *z", "z[i] = a*x[i] + b*y[i]", "lin")
    a, b = dtype(3), dtype(5)
    for n in SIZES:
        x, y = sample(rng, n, dtype), sample(rng, n, dtype)
        dz = cla.empty(queue, n, dtype)
        knl(a, cla.to_device(queue, x), b, cla.to_device(queue, y), dz)
        with np.errstate(over="ignore"):
            want = (a * x + b * y).astype(dtype)
        if np.dtype(dtype).kind == "f":
            # a*x + b*y may be contracted to one fma: within a rounding of each term
            bound = 2 * np.finfo(dtype).eps * (np.abs(a * x) + np.abs(b * y))
            assert (np.abs(dz.get() - want) <= bound).all()
        else:
            np.testing.assert_array_equal(dz.get(), want)


@pytest.mark.parametrize(
    "slc", [slice(5, 20000), slice(5, 20000, 17), slice(3000, 5, -1), slice(1000, -1), slice(None, None, -3)],
    ids=str,
)
def test_ranged_and_sliced_kernels(ctx, queue, slc):
    set_to_seven = ElementwiseKernel(ctx, "float *z", "z[i] = 7", "set_to_seven")
    dev = cla.zeros(queue, 50_000, np.float32)
    host = np.zeros(50_000, np.float32)
    host[slc] = 7
    set_to_seven(dev, slice=slc)
    np.testing.assert_array_equal(dev.get(), host)


def test_range_argument_and_index(ctx, queue):
    knl = ElementwiseKernel(ctx, "long *z", "z[i] = i * i")
    dev = cla.zeros(queue, 10_000, np.int64)
    knl(dev, range=slice(100, 9000, 7))
    want = np.zeros(10_000, np.int64)
    idx = np.arange(100, 9000, 7)
    want[idx] = idx * idx
    np.testing.assert_array_equal(dev.get(), want)


def test_build_options_and_preamble(ctx, queue, rng):
    knl = ElementwiseKernel(
        ctx, "float *out, const float *in",
        "out[i] = twice(in[i])\n#ifdef ADD_ONE\n + 1\n#endif\n;",
        preamble="#define SCALE 2.0f\nfloat twice(float v) { return SCALE * v; }",
        options=["-D", "ADD_ONE"])
    x = rng.random(5000).astype(np.float32)
    out = cla.empty(queue, 5000, np.float32)
    knl(out, cla.to_device(queue, x))
    np.testing.assert_array_equal(out.get(), 2 * x + 1)


def test_arrays_at_an_offset(ctx, queue, rng):
    knl = ElementwiseKernel(ctx, "int *z, int *x, int *y", "z[i] = x[i] - y[i]")
    x = rng.integers(-1000, 1000, 20_000).astype(np.int32)
    y = rng.integers(-1000, 1000, 20_000).astype(np.int32)
    dx, dy = cla.to_device(queue, x), cla.to_device(queue, y)
    dz = cla.zeros(queue, 20_000, np.int32)
    knl(dz[3:9003], dx[100:9100], dy[11_000:20_000])
    want = np.zeros(20_000, np.int32)
    want[3:9003] = x[100:9100] - y[11_000:20_000]
    np.testing.assert_array_equal(dz.get(), want)


def test_vector_types(ctx, queue, rng):
    knl = ElementwiseKernel(ctx, "float4 *out, float4 *a, float2 *b",
                            "out[i] = a[i] * (float4)(b[i], b[i].yx) + (float4)(1, 2, 3, 4)")
    n = 3001
    a = np.zeros(n, cltypes.float4)
    b = np.zeros(n, cltypes.float2)
    av = rng.random((n, 4)).astype(np.float32)
    bv = rng.random((n, 2)).astype(np.float32)
    a.view(np.float32).reshape(n, 4)[:] = av
    b.view(np.float32).reshape(n, 2)[:] = bv
    out = cla.empty(queue, n, cltypes.float4)
    knl(out, cla.to_device(queue, a), cla.to_device(queue, b))
    got = out.get().view(np.float32).reshape(n, 4)
    want = av * np.concatenate([bv, bv[:, ::-1]], axis=1) + np.array([1, 2, 3, 4], np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_several_outputs_and_divergent_work(ctx, queue, rng):
    # a data-dependent loop and branches per item: Collatz steps, with two outputs
    knl = ElementwiseKernel(ctx, "const uint *x, uint *steps, uint *peak", """
        uint v = x[i], s = 0, p = v;
        while (v != 1u) {
            if (v & 1u) v = 3u * v + 1u; else v >>= 1;
            p = max(p, v);
            ++s;
        }
        steps[i] = s;
        peak[i] = p;
        """)
    x = rng.integers(1, 100_000, 4099).astype(np.uint32)
    steps, peak = cla.empty(queue, x.size, np.uint32), cla.empty(queue, x.size, np.uint32)
    knl(cla.to_device(queue, x), steps, peak)
    want_s, want_p = [], []
    for v in x.tolist():
        s, p = 0, v
        while v != 1:
            v = 3 * v + 1 if v & 1 else v >> 1
            p, s = max(p, v), s + 1
        want_s.append(s)
        want_p.append(p)
    np.testing.assert_array_equal(steps.get(), want_s)
    np.testing.assert_array_equal(peak.get(), want_p)


def test_kernel_with_a_private_array_and_bounds(ctx, queue, rng):
    knl = ElementwiseKernel(ctx, "float *out, const float *x", """
        float taps[5] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};
        float acc = 0;
        for (int k = 0; k < 5; ++k) {
            long j = (long)i + k - 2;
            if (j >= 0 && j < n) acc += taps[k] * x[j];
        }
        out[i] = acc;
        """)
    x = rng.random(10_007).astype(np.float32)
    out = cla.empty(queue, x.size, np.float32)
    knl(out, cla.to_device(queue, x))
    want = np.convolve(x, np.array([0.1, 0.2, 0.4, 0.2, 0.1], np.float32), mode="same")
    np.testing.assert_allclose(out.get(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint64, np.float32, np.float64])
def test_take_put_and_multi(queue, device, rng, dtype):
    need(device, dtype)
    host = sample(rng, 30_000, dtype)
    dev = cla.to_device(queue, host)
    idx = rng.integers(0, host.size, 7001).astype(np.int32)
    didx = cla.to_device(queue, idx)
    np.testing.assert_array_equal(cla.take(dev, didx).get(), host[idx])
    np.testing.assert_array_equal(dev[didx].get(), host[idx])
    # put (fancy set) with distinct indices
    uidx = rng.permutation(host.size)[:5000].astype(np.int32)
    vals = sample(rng, 5000, dtype)
    dev2 = cla.to_device(queue, host)
    dev2[cla.to_device(queue, uidx)] = cla.to_device(queue, vals)
    want = host.copy()
    want[uidx] = vals
    np.testing.assert_array_equal(dev2.get(), want)
    # several arrays through one index (pyopencl's multi_take itself is broken)
    dest = [cla.zeros(queue, 30_000, dtype) for _ in range(2)]
    cla.multi_put([cla.to_device(queue, vals)] * 2, cla.to_device(queue, uidx), out=dest)
    want = np.zeros(30_000, dtype)
    want[uidx] = vals
    for d in dest:
        np.testing.assert_array_equal(d.get(), want)


def test_multi_take_put(queue, rng):
    n, field = 17, 8
    buf = cla.zeros(queue, n * field, dtype=np.float32)
    src = [cla.to_device(queue, rng.random(field * n).astype(np.float32)) for _ in range(n)]
    dest_idx = np.array([0, 1, 2, 3, 32, 33, 34, 35], dtype=np.uint32)
    read_map = np.array([7, 6, 5, 4, 3, 2, 1, 0], dtype=np.uint32)
    cla.multi_take_put(arrays=src, dest_indices=cla.to_device(queue, dest_idx),
                       src_indices=cla.to_device(queue, read_map),
                       src_offsets=[i * field for i in range(n)], dest_shape=(96,), out=[buf] * n)
    got = buf.get()
    last = src[-1].get()
    want = np.zeros(n * field, np.float32)
    want[dest_idx] = last[(n - 1) * field + read_map]
    np.testing.assert_array_equal(got[:96], want[:96])


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
def test_if_positive_where_maximum_minimum(queue, device, rng, dtype):
    need(device, dtype)
    c = rng.integers(-3, 3, 20_011).astype(np.int32)
    a, b = sample(rng, 20_011, dtype), sample(rng, 20_011, dtype)
    dc, da, db = (cla.to_device(queue, v) for v in (c, a, b))
    np.testing.assert_array_equal(cla.if_positive(dc, da, db).get(), np.where(c > 0, a, b))
    np.testing.assert_array_equal(cla.if_positive(dc, da, dtype(7)).get(), np.where(c > 0, a, dtype(7)))
    np.testing.assert_array_equal(cla.maximum(da, db).get(), np.maximum(a, b))
    np.testing.assert_array_equal(cla.minimum(da, db).get(), np.minimum(a, b))
    np.testing.assert_array_equal(cla.maximum(da, dtype(3)).get(), np.maximum(a, dtype(3)))
    np.testing.assert_array_equal(cla.minimum(db, dtype(-3)).get(), np.minimum(b, dtype(-3)))


def test_maximum_minimum_propagate_nan(queue):
    a = np.array([np.nan, 1, 2, np.nan, -np.inf], np.float32)
    b = np.array([0, np.nan, 3, np.nan, 5], np.float32)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    np.testing.assert_array_equal(cla.maximum(da, db).get(), np.maximum(a, b))
    np.testing.assert_array_equal(cla.minimum(da, db).get(), np.minimum(a, b))


def test_kernel_on_an_out_of_order_queue(ctx, device, rng):
    # clmath/elementwise results wait for their inputs' events
    props = cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE
    if not device.queue_properties & props:
        pytest.skip("no out-of-order queues")
    queue = cl.CommandQueue(ctx, properties=props)
    a = rng.random(1_000_000).astype(np.float32)
    da = cla.to_device(queue, a)
    b = abs(da * 5 - 2) + 1
    queue.finish()
    np.testing.assert_allclose(b.get(), np.abs(a * 5 - 2) + 1, rtol=1e-6)
