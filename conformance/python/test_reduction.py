"""pyopencl reductions: sum/min/max/any/all/dot/vdot/subset_* over every dtype and odd
sizes (empty, one, primes, past a work-group and past one stage), slices and strided
ranges, NaN handling and initial values like numpy, and ReductionKernel with custom
map/reduce expressions, preambles, struct values and no input at all."""

import numpy as np
import pyopencl.array as cla
import pytest
from pyopencl.reduction import ReductionKernel
from pyopencl.tools import get_or_register_dtype, match_dtype_to_c_struct

from conftest import has_fp64, require

INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
FLOAT_DTYPES = [np.float32, np.float64]
COMPLEX_DTYPES = [np.complex64, np.complex128]
SIZES = [0, 1, 31, 1023, 4097, 300_007]


def need(device, *dtypes):
    if any(np.dtype(d) in (np.dtype(np.float64), np.dtype(np.complex128)) for d in dtypes):
        require(has_fp64(device), "cl_khr_fp64")


def values(rng, n, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    return rng.standard_normal(n).astype(dtype)


def assert_sum_close(got, host, dtype):
    """Integer sums exactly (wrapping like numpy in the array's type); float sums to
    a few ulps of the sum of magnitudes (the order of additions is free)."""
    dtype = np.dtype(dtype)
    want = host.sum(dtype=dtype)
    if dtype.kind in "iu":
        assert got == want, (got, want)
        return
    eps = np.finfo(dtype).eps
    bound = 4 * eps * max(np.log2(max(host.size, 2)), 1) * (np.abs(host).sum(dtype=np.float64) + 1)
    assert abs(complex(got) - complex(host.astype(np.complex128).sum())) <= bound, (got, want)


@pytest.mark.parametrize("dtype", INT_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES)
def test_sum(queue, device, rng, dtype):
    need(device, dtype)
    for n in SIZES:
        host = values(rng, n, dtype)
        got = cla.sum(cla.to_device(queue, host)).get()
        assert got.dtype == np.dtype(dtype)
        assert_sum_close(got, host, dtype)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.complex64, np.float64])
def test_sum_of_slices_and_strided_ranges(queue, device, rng, dtype):
    need(device, dtype)
    host = values(rng, 200_000, dtype)
    dev = cla.to_device(queue, host)
    for slc in [slice(None), slice(1000, 3000), slice(1000, -3000), slice(1000, None),
                slice(1000, None, 3), slice(7, 150_000, 17), slice(1000, 1000)]:
        if slc.step is None:  # a view at an offset
            assert_sum_close(cla.sum(dev[slc]).get(), host[slc], dtype)
        assert_sum_close(cla.sum(dev, slice=slc).get(), host[slc], dtype)


def test_sum_into_a_wider_type(queue, rng):
    a = rng.integers(2**30, 2**31 - 1, 10_001).astype(np.int32)
    assert cla.sum(cla.to_device(queue, a), dtype=np.int64).get() == a.sum(dtype=np.int64)
    f = rng.random(10_001).astype(np.float32) * 1e4
    np.testing.assert_allclose(cla.sum(cla.to_device(queue, f), dtype=np.float64).get(),
                               f.sum(dtype=np.float64), rtol=1e-13)


@pytest.mark.parametrize("dtype", INT_DTYPES + FLOAT_DTYPES)
def test_min_max(queue, device, rng, dtype):
    need(device, dtype)
    for n in SIZES[1:]:
        host = values(rng, n, dtype)
        dev = cla.to_device(queue, host)
        assert cla.min(dev).get() == host.min()
        assert cla.max(dev).get() == host.max()
    # the extremes of the type itself
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        host = np.array([0, info.max, 3, info.min, 7] * 301, dtype=dtype)
        dev = cla.to_device(queue, host)
        assert cla.min(dev).get() == info.min and cla.max(dev).get() == info.max


@pytest.mark.parametrize("reduction", ["sum", "max", "min"])
def test_empty_reductions_and_initial_values(queue, device, reduction):
    need(device, np.float64)
    host = np.array([], dtype=np.float64)
    dev = cla.to_device(queue, host)
    if reduction == "sum":
        assert cla.sum(dev).get() == 0
    else:
        with pytest.raises(ValueError):
            getattr(cla, reduction)(dev)
    for initial in [5.0, -5.0]:
        for x in [host, np.linspace(-1, 1, 10)]:
            got = getattr(cla, reduction)(cla.to_device(queue, x), initial=initial)
            got = got.get() if isinstance(got, cla.Array) else got  # empty: a host scalar
            np.testing.assert_allclose(got, getattr(np, reduction)(x, initial=initial))


@pytest.mark.parametrize("reduction", ["sum", "max", "min"])
@pytest.mark.parametrize("case", [[np.nan, np.nan], [np.nan, 1.0], [1.0, np.nan, 3.0] * 1000])
def test_reductions_propagate_nan(queue, device, reduction, case):
    need(device, np.float64)
    for dtype in FLOAT_DTYPES:
        x = np.array(case, dtype=dtype)
        for kw in [{}, {"initial": 5.0}]:
            got = getattr(cla, reduction)(cla.to_device(queue, x), **kw).get()
            assert np.isnan(got), (reduction, dtype, kw, got)
            assert np.isnan(getattr(np, reduction)(x, **kw))


def test_any_all(queue, rng):
    for n in [1, 257, 100_001]:
        for fill in [0, 1]:
            host = np.full(n, fill, dtype=np.int8)
            dev = cla.to_device(queue, host)
            assert bool(cla.any(dev).get()) == bool(host.any())
            assert bool(cla.all(dev).get()) == bool(host.all())
            host[rng.integers(n)] = 1 - fill
            dev = cla.to_device(queue, host)
            assert bool(cla.any(dev).get()) == bool(host.any())
            assert bool(cla.all(dev).get()) == bool(host.all())
    for dtype in [np.int32, np.float32]:
        host = np.zeros(5000, dtype=dtype)
        assert not cla.any(cla.to_device(queue, host)).get()


@pytest.mark.parametrize("a_dtype", FLOAT_DTYPES + COMPLEX_DTYPES)
@pytest.mark.parametrize("b_dtype", FLOAT_DTYPES + COMPLEX_DTYPES)
def test_dot_and_vdot(queue, device, rng, a_dtype, b_dtype):
    need(device, a_dtype, b_dtype)
    n = 200_001
    a, b = values(rng, n, a_dtype), values(rng, n, b_dtype)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    got = cla.dot(da, db).get()
    assert got.dtype == np.result_type(a_dtype, b_dtype)
    assert abs(got - np.dot(a.astype(np.complex128), b)) <= 1e-5 * scale
    got = cla.vdot(da, db).get()
    assert abs(got - np.vdot(a.astype(np.complex128), b)) <= 1e-5 * scale
    # a slice of both
    got = cla.dot(da, db, slice=slice(100, 5100)).get()
    assert abs(got - np.dot(a[100:5100].astype(np.complex128), b[100:5100])) <= 1e-5 * scale


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
def test_subset_min_max_dot(queue, device, rng, dtype):
    need(device, dtype)
    host = values(rng, 200_000, dtype)
    idx = np.flatnonzero(np.arange(200_000) % 5 != 2).astype(np.int32)
    dev, didx = cla.to_device(queue, host), cla.to_device(queue, idx)
    assert cla.subset_min(didx, dev).get() == host[idx].min()
    assert cla.subset_max(didx, dev).get() == host[idx].max()
    other = values(rng, 200_000, dtype)
    got = cla.subset_dot(didx, dev, cla.to_device(queue, other)).get()
    want = np.dot(host[idx].astype(np.float64), other[idx].astype(np.float64))
    scale = np.abs(host[idx]).astype(np.float64) @ np.abs(other[idx]).astype(np.float64)
    assert abs(got - want) <= 1e-5 * scale


def test_reduction_kernel_map_and_reduce(ctx, queue, device, rng):
    need(device, np.float64)
    sumsq = ReductionKernel(ctx, np.float64, neutral="0", reduce_expr="a+b",
                            map_expr="(double)x[i] * (double)x[i]", arguments="__global const float *x")
    x = rng.standard_normal(300_001).astype(np.float32)
    np.testing.assert_allclose(sumsq(cla.to_device(queue, x)).get(), np.sum(x.astype(np.float64) ** 2), rtol=1e-12)
    # a reduce that is not a sum, arguments after the array, a scalar argument
    weighted_max = ReductionKernel(ctx, np.float32, neutral="-INFINITY", reduce_expr="fmax(a, b)",
                                   map_expr="w * fabs(x[i] - y[i])",
                                   arguments="__global const float *x, __global const float *y, float w")
    y = rng.standard_normal(300_001).astype(np.float32)
    got = weighted_max(cla.to_device(queue, x), cla.to_device(queue, y), np.float32(0.5)).get()
    assert got == np.float32(0.5) * np.abs(x - y).max()
    # only a range, no data: the sum of the indices
    red = ReductionKernel(ctx, np.int64, neutral="0", reduce_expr="a+b", map_expr="i", arguments=[])
    for n in [1, 2000, 1_000_003]:
        assert red(range=slice(n), queue=queue).get() == n * (n - 1) // 2
    # a scalar before the arrays (pyopencl issue 535)
    dot = ReductionKernel(ctx, np.float32, neutral="0", reduce_expr="a+b", map_expr="z*x[i]*y[i]",
                          arguments="float z, __global float *x, __global float *y")
    a = cla.arange(queue, 400, dtype=np.float32)
    assert abs(dot(0.1, a, a).get() - 0.1 * np.sum(np.arange(400) ** 2)) < 1e-2


def test_reduction_kernel_with_preamble_and_struct_value(ctx, queue, device, rng):
    # argmax as a reduction over (value, index) structs laid out like numpy's
    dtype = np.dtype([("value", np.float32), ("index", np.int32)])
    dtype, c_decl = match_dtype_to_c_struct(device, "val_idx", dtype)
    dtype = get_or_register_dtype("val_idx", dtype)
    preamble = c_decl + r"""//CL//
        val_idx vi_new(float v, int i) { val_idx r; r.value = v; r.index = i; return r; }
        val_idx vi_max(val_idx a, val_idx b)
        {
            if (b.value > a.value || (b.value == a.value && b.index < a.index)) return b;
            return a;
        }
        """
    argmax = ReductionKernel(ctx, dtype, neutral="vi_new(-INFINITY, -1)", reduce_expr="vi_max(a, b)",
                             map_expr="vi_new(x[i], i)", arguments="__global const float *x", preamble=preamble)
    for n in [1, 129, 65_537, 400_000]:
        x = rng.standard_normal(n).astype(np.float32)
        got = argmax(cla.to_device(queue, x)).get()
        assert got["index"] == np.argmax(x) and got["value"] == x.max()


def test_reduction_kernel_minmax_collector(ctx, queue, device, rng):
    # pyopencl's test_struct_reduce: a struct with padding matched to the device
    dtype = np.dtype([("cur_min", np.int32), ("cur_max", np.int32), ("pad", np.int32)])
    dtype, c_decl = match_dtype_to_c_struct(device, "minmax_collector", dtype)
    dtype = get_or_register_dtype("minmax_collector", dtype)
    preamble = c_decl + r"""//CL//
        minmax_collector mmc_neutral()
        {
            minmax_collector r; r.cur_min = 1 << 30; r.cur_max = -(1 << 30); return r;
        }
        minmax_collector mmc_from_scalar(int x)
        {
            minmax_collector r; r.cur_min = x; r.cur_max = x; return r;
        }
        minmax_collector agg_mmc(minmax_collector a, minmax_collector b)
        {
            minmax_collector r = a;
            if (b.cur_min < r.cur_min) r.cur_min = b.cur_min;
            if (b.cur_max > r.cur_max) r.cur_max = b.cur_max;
            return r;
        }
        """
    red = ReductionKernel(ctx, dtype, neutral="mmc_neutral()", reduce_expr="agg_mmc(a, b)",
                          map_expr="mmc_from_scalar(x[i])", arguments="__global int *x", preamble=preamble)
    x = rng.integers(0, 10**6, 20_000).astype(np.int32)
    got = red(cla.to_device(queue, x)).get()
    assert got["cur_min"] == x.min() and got["cur_max"] == x.max()
