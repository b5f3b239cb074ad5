"""pyopencl.array operations on every dtype pyopencl supports (int8..uint64,
float32/float64; complex ones are in test_complex.py): arithmetic with arrays and
scalars in numpy's type promotion, comparisons, logical and bitwise operators, fill,
arange, astype, views, Fortran order and transposes, reshapes, concatenation, diff,
reverse, empty arrays, odd sizes, and rectangular (strided) copies between host and
device through enqueue_copy, compared with numpy."""

import itertools
import operator

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pytest

from conftest import has_fp64, require

INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
FLOAT_DTYPES = [np.float32, np.float64]
DTYPES = INT_DTYPES + FLOAT_DTYPES
SIZES = [0, 1, 31, 1009, 65_539]


def need(device, *dtypes):
    if any(np.dtype(d) == np.float64 for d in dtypes):
        require(has_fp64(device), "cl_khr_fp64")


def sample(rng, n, dtype, lo=-100, hi=100):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(lo, info.min), min(hi, info.max), n, endpoint=True).astype(dtype)
    return rng.uniform(lo, hi, n).astype(dtype)


def assert_same(got, want):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=4 * np.finfo(want.dtype).eps, atol=0)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_arithmetic_with_arrays_and_scalars(queue, device, rng, dtype):
    need(device, dtype)
    for n in SIZES:
        a = sample(rng, n, dtype)
        b = sample(rng, n, dtype, 1, 50)  # non-zero divisors
        da, db = cla.to_device(queue, a), cla.to_device(queue, b)
        s = dtype(3)
        with np.errstate(over="ignore"):
            for op in [operator.add, operator.sub, operator.mul]:
                if op is operator.sub and np.dtype(dtype).kind == "u":
                    continue  # pyopencl computes x - y as x + (-1)*y: no -1 in unsigned
                assert_same(op(da, db).get(), op(a, b))
                assert_same(op(da, s).get(), op(a, s))
                assert_same(op(s, db).get(), op(s, b))
            if np.dtype(dtype).kind == "f" or np.dtype(dtype).itemsize >= 4:
                # true division: float results (small ints promote to float32 on
                # the device, float64 in numpy, so they are compared by value)
                np.testing.assert_allclose((da / db).get(), a / b, rtol=1e-6)
            if np.dtype(dtype).kind == "i":
                assert_same((-da).get(), -a)
                assert_same(abs(da).get(), np.abs(a))


@pytest.mark.parametrize("dtype", DTYPES)
def test_in_place_operators(queue, device, rng, dtype):
    need(device, dtype)
    a, b = sample(rng, 4099, dtype), sample(rng, 4099, dtype, 1, 9)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    want = a.copy()
    with np.errstate(over="ignore"):
        da += db
        want += b
        da *= dtype(2)
        want *= dtype(2)
        da -= dtype(1)
        want -= dtype(1)
    assert_same(da.get(), want)
    if np.dtype(dtype).kind == "f":
        da /= db
        want /= b
        assert_same(da.get(), want)


@pytest.mark.parametrize(("a_dtype", "b_dtype"), [
    (np.int8, np.int32), (np.uint8, np.int16), (np.int32, np.float32), (np.int64, np.float64),
    (np.uint32, np.int64), (np.float32, np.float64), (np.uint16, np.float32)])
def test_mixed_dtype_promotion(queue, device, rng, a_dtype, b_dtype):
    need(device, a_dtype, b_dtype)
    a, b = sample(rng, 3001, a_dtype), sample(rng, 3001, b_dtype)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    for op in [operator.add, operator.sub, operator.mul]:
        want = op(a, b)
        got = op(da, db).get()
        assert got.dtype == want.dtype, (op, got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])  # pyopencl has no integer pow
def test_powers(queue, device, rng, dtype):
    need(device, dtype)
    a = sample(rng, 2003, dtype, 1, 9)
    b = sample(rng, 2003, dtype, 0, 5)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    tol = 1e-5 if dtype in (np.float32, np.int32) else 1e-12
    np.testing.assert_allclose((da**db).get(), a**b, rtol=tol)
    np.testing.assert_allclose((da**2).get(), a**2, rtol=tol)
    np.testing.assert_allclose((2**db).get(), 2**b, rtol=tol)
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose((da**-1).get(), 1 / a, rtol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_comparisons_and_logic(queue, device, rng, dtype):
    need(device, dtype)
    a, b = sample(rng, 5003, dtype, -3, 3), sample(rng, 5003, dtype, -3, 3)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    for op in [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]:
        np.testing.assert_array_equal(op(da, db).get(), op(a, b).astype(np.int8), err_msg=op.__name__)
        np.testing.assert_array_equal(op(da, dtype(1)).get(), op(a, dtype(1)).astype(np.int8))
    np.testing.assert_array_equal(cla.logical_and(da, db).get(), np.logical_and(a, b).astype(np.int8))
    np.testing.assert_array_equal(cla.logical_or(da, db).get(), np.logical_or(a, b).astype(np.int8))
    np.testing.assert_array_equal(cla.logical_not(da).get(), np.logical_not(a).astype(np.int8))


@pytest.mark.parametrize(("a_dtype", "b_dtype"), list(itertools.product([np.int8, np.int16, np.int32, np.int64], repeat=2)))
def test_bitwise(queue, rng, a_dtype, b_dtype):
    a = rng.integers(-(2**31), 2**31, 16, dtype=np.int64).astype(a_dtype)
    b = rng.integers(-(2**31), 2**31, 16, dtype=np.int64).astype(b_dtype)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    s = int(b_dtype(-12345 % 127))
    for op in [operator.and_, operator.or_, operator.xor]:
        assert_same(op(da, db).get(), op(a, b))
        assert_same(op(da, s).get(), op(a, s))
        assert_same(op(s, db).get(), op(s, b))
    for iop, op in [(operator.iand, operator.and_), (operator.ior, operator.or_), (operator.ixor, operator.xor)]:
        d = da.copy()
        assert iop(d, s) is d
        assert_same(d.get(), op(a, s))
    assert_same((~da).get(), ~a)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_unsigned_bitwise_and_wraparound(queue, rng, dtype):
    info = np.iinfo(dtype)
    a = rng.integers(0, info.max, 1000, endpoint=True, dtype=dtype)
    b = rng.integers(0, info.max, 1000, endpoint=True, dtype=dtype)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    assert_same((da & db).get(), a & b)
    assert_same((da ^ db).get(), a ^ b)
    assert_same((~da).get(), ~a)
    with np.errstate(over="ignore"):
        assert_same((da + db).get(), a + b)
        assert_same((da * db).get(), a * b)
        assert_same((da * dtype(info.max)).get(), a * dtype(info.max))
        # (pyopencl computes x - y as x + (-1)*y, which has no unsigned -1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fill_zeros_arange_astype(queue, device, rng, dtype):
    need(device, dtype)
    for n in SIZES:
        np.testing.assert_array_equal(cla.zeros(queue, n, dtype).get(), np.zeros(n, dtype))
        np.testing.assert_array_equal(cla.empty(queue, n, dtype).fill(dtype(5)).get(), np.full(n, 5, dtype))
    np.testing.assert_array_equal(cla.arange(queue, 0, 100, 3, dtype=dtype).get(), np.arange(0, 100, 3, dtype=dtype))
    np.testing.assert_array_equal(cla.zeros(queue, (3, 0, 2), dtype).get(), np.zeros((3, 0, 2), dtype))
    host = sample(rng, 10_007, dtype)
    for other in DTYPES:
        need(device, other)
        with np.errstate(invalid="ignore", over="ignore"):
            want = host.astype(other)
        if np.dtype(dtype).kind == "f" and np.dtype(other).kind in "iu":
            # float -> int: C truncation; out-of-range values are undefined in C
            info = np.iinfo(other)
            host_in = np.clip(host, info.min, info.max).astype(dtype)
            ok = (host_in > info.min) & (host_in < info.max) & (host == host_in)
            got = cla.to_device(queue, host).astype(other).get()
            np.testing.assert_array_equal(got[ok], want[ok])
            continue
        np.testing.assert_array_equal(cla.to_device(queue, host).astype(other).get(), want)


def test_fill_multidimensional_and_mem_pool(ctx, queue):
    from pyopencl.tools import MemoryPool, ImmediateAllocator

    pool = MemoryPool(ImmediateAllocator(queue))
    for shape in [(5, 7), (2, 3, 4), (1,), (4, 1, 1, 3)]:
        a = cla.empty(queue, shape, np.float32, allocator=pool).fill(2.5)
        b = cla.arange(queue, int(np.prod(shape)), dtype=np.float32, allocator=pool).reshape(shape)
        np.testing.assert_array_equal((a * b).get(), 2.5 * np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
    assert pool.managed_bytes > 0


def test_fortran_order_transpose_reshape(queue, device, rng):
    need(device, np.float64)
    h = rng.standard_normal((37, 53))
    f = np.asfortranarray(h)
    df = cla.to_device(queue, f)
    assert df.flags.f_contiguous
    got = (df * 2 + 1).get()
    assert got.flags.f_contiguous
    np.testing.assert_array_equal(got, f * 2 + 1)
    dc = cla.to_device(queue, h)
    np.testing.assert_array_equal(dc.T.get(), h.T)
    np.testing.assert_array_equal(cla.transpose(dc).get(), h.T)
    np.testing.assert_array_equal((dc.T * 3).get(), h.T * 3)
    np.testing.assert_array_equal(dc.reshape(53, 37).get(), h.reshape(53, 37))
    np.testing.assert_array_equal(dc.reshape(-1).get(), h.reshape(-1))
    np.testing.assert_array_equal(dc.ravel().get(), h.ravel())
    np.testing.assert_array_equal(df.ravel(order="F").get(), f.ravel(order="F"))
    np.testing.assert_array_equal(dc.reshape(1, 37, 53, 1).squeeze().get(), h)
    # assignment into an F-ordered array from the transpose of a C-ordered one
    out = cla.empty(queue, (53, 37), np.float64, order="F")
    out[:] = dc.T
    np.testing.assert_array_equal(out.get(), h.T)
    with pytest.raises(NotImplementedError):
        out[:] = cla.to_device(queue, h.T.copy())  # differing strides


def test_views_offsets_and_setitem(queue, rng):
    h = rng.integers(0, 1000, (40, 30)).astype(np.int32)
    d = cla.to_device(queue, h)
    np.testing.assert_array_equal(d[5:17].get(), h[5:17])  # rows: contiguous at an offset
    np.testing.assert_array_equal((d[5:17] + d[20:32]).get(), h[5:17] + h[20:32])
    np.testing.assert_array_equal(d.view(np.uint32).get(), h.view(np.uint32))
    np.testing.assert_array_equal(d.view(np.int8).get(), h.view(np.int8))
    d[3:9] = 7
    h[3:9] = 7
    d[10] = np.arange(30, dtype=np.int32)
    h[10] = np.arange(30)
    d[20:25] = cla.to_device(queue, h[0:5] * 2)
    h[20:25] = h[0:5] * 2
    np.testing.assert_array_equal(d.get(), h)
    flat = d.ravel()
    assert flat[17].get() == h.ravel()[17]
    np.testing.assert_array_equal(flat[-30:].get(), h.ravel()[-30:])


def test_concatenate_stack_diff_reverse(queue, rng):
    parts = [rng.standard_normal((n, 4)).astype(np.float32) for n in (3, 0, 11, 1)]
    got = cla.concatenate([cla.to_device(queue, p) for p in parts])
    np.testing.assert_array_equal(got.get(), np.concatenate(parts))
    a = rng.standard_normal((5, 6)).astype(np.float32)
    b = rng.standard_normal((5, 6)).astype(np.float32)
    np.testing.assert_array_equal(cla.stack([cla.to_device(queue, a), cla.to_device(queue, b)]).get(), np.stack([a, b]))
    v = rng.integers(-100, 100, 10_001).astype(np.int64)
    dv = cla.to_device(queue, v)
    np.testing.assert_array_equal(cla.diff(dv).get(), np.diff(v))
    np.testing.assert_array_equal(dv.reverse().get(), v[::-1])
    assert len(dv) == v.size


@pytest.mark.parametrize("shape", [0, (), (3, 0, 2), (0, 5), (5, 0)], ids=str)
def test_empty_arrays(queue, shape):
    d = cla.empty(queue, shape, np.float32)
    h = np.empty(shape, np.float32)
    assert d.shape == h.shape and d.size == h.size
    if d.size:
        return
    np.testing.assert_array_equal((d + 1).get(), h + 1)
    np.testing.assert_array_equal(d.get(), h)
    assert cla.sum(d).get() == 0


def test_scalar_arrays_and_device_scalars(queue, rng):
    a = rng.standard_normal(1000).astype(np.float32)
    da = cla.to_device(queue, a)
    s = cla.sum(da)  # a device scalar, shape ()
    assert s.shape == ()
    np.testing.assert_allclose((da + s).get(), a + a.sum(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose((da * s).get(), a * a.sum(), rtol=1e-4)
    np.testing.assert_allclose((s - da).get(), a.sum() - a, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(float(s.get()), a.sum(), rtol=1e-5)


def test_nan_arithmetic(queue, device):
    need(device, np.float64)
    a = np.array([np.nan, 1, np.inf, -np.inf, 0.0, -0.0])
    b = np.array([1.0, np.nan, np.inf, np.inf, -0.0, 0.0])
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    with np.errstate(invalid="ignore"):
        for op in [operator.add, operator.sub, operator.mul]:
            np.testing.assert_array_equal(op(da, db).get(), op(a, b))
        np.testing.assert_array_equal((da == db).get(), (a == b).astype(np.int8))
        np.testing.assert_array_equal((da != db).get(), (a != b).astype(np.int8))


def test_rect_copies_between_host_and_device(ctx, queue, rng):
    # clEnqueue{Read,Write,Copy}BufferRect: a sub-block of a 3-D array
    h = rng.integers(0, 2**31, (6, 7, 8)).astype(np.int32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, h.nbytes)
    cl.enqueue_copy(queue, buf, h)
    out = np.zeros((3, 4, 5), np.int32)
    cl.enqueue_copy(queue, out, buf, buffer_origin=(2 * 4, 1, 2), host_origin=(0, 0, 0), region=(5 * 4, 4, 3),
                    buffer_pitches=(8 * 4, 7 * 8 * 4), host_pitches=(5 * 4, 4 * 5 * 4))
    np.testing.assert_array_equal(out, h[2:5, 1:5, 2:7])
    # write a block back at another place
    cl.enqueue_copy(queue, buf, out, buffer_origin=(0, 3, 3), host_origin=(4, 1, 0), region=(3 * 4, 3, 3),
                    buffer_pitches=(8 * 4, 7 * 8 * 4), host_pitches=(5 * 4, 4 * 5 * 4))
    want = h.copy()
    want[3:6, 3:6, 0:3] = out[0:3, 1:4, 1:4]
    got = np.empty_like(h)
    cl.enqueue_copy(queue, got, buf)
    np.testing.assert_array_equal(got, want)
    # device to device
    buf2 = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, h.nbytes)
    cl.enqueue_fill_buffer(queue, buf2, np.int32(-1), 0, h.nbytes)
    cl.enqueue_copy(queue, buf2, buf, src_origin=(4, 2, 1), dst_origin=(0, 0, 0), region=(16, 3, 2),
                    src_pitches=(32, 224), dst_pitches=(32, 224))
    got2 = np.empty_like(h)
    cl.enqueue_copy(queue, got2, buf2)
    want2 = np.full_like(h, -1)
    want2[0:2, 0:3, 0:4] = want[1:3, 2:5, 1:5]
    np.testing.assert_array_equal(got2, want2)


def test_map_to_host_and_async_get(queue, rng):
    h = rng.standard_normal((64, 33)).astype(np.float32)
    d = cla.to_device(queue, h)
    mapped = d.map_to_host()
    np.testing.assert_array_equal(mapped, h)
    del mapped
    out, evt = d.get_async()
    evt.wait()
    np.testing.assert_array_equal(out, h)
