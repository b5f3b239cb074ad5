"""pyopencl's array library on the driver: element-wise kernels, reductions (local
memory + barriers), scans, compared with numpy."""

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.clmath as clmath
import pytest
from pyopencl.elementwise import ElementwiseKernel
from pyopencl.reduction import ReductionKernel
from pyopencl.scan import GenericScanKernel, InclusiveScanKernel, ExclusiveScanKernel


@pytest.fixture()
def rng():
    return np.random.default_rng(7)


def test_elementwise_arithmetic(queue, rng):
    a = rng.standard_normal(100_003).astype(np.float32)
    b = rng.standard_normal(100_003).astype(np.float32)
    da = cla.to_device(queue, a)
    db = cla.to_device(queue, b)
    np.testing.assert_allclose((da + db).get(), a + b, rtol=1e-6)
    np.testing.assert_allclose((da * db - 2 * da).get(), a * b - 2 * a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose((da / (abs(db) + 1)).get(), a / (np.abs(b) + 1), rtol=1e-6)
    np.testing.assert_allclose(clmath.sqrt(abs(da)).get(), np.sqrt(np.abs(a)), rtol=1e-6)
    np.testing.assert_allclose(clmath.exp(da).get(), np.exp(a), rtol=1e-5)
    np.testing.assert_allclose(clmath.sin(da).get(), np.sin(a), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(cla.maximum(da, db).get(), np.maximum(a, b))
    np.testing.assert_array_equal((da > db).get(), (a > b).astype(np.int8))


def test_elementwise_integers_and_casts(queue, rng):
    a = rng.integers(-1000, 1000, 50_000).astype(np.int32)
    da = cla.to_device(queue, a)
    np.testing.assert_array_equal((da * 3 + 7).get(), a * 3 + 7)
    np.testing.assert_array_equal((da - da * 2).get(), -a)
    np.testing.assert_array_equal(abs(da).get(), np.abs(a))
    np.testing.assert_array_equal(da.astype(np.float32).get(), a.astype(np.float32))
    np.testing.assert_array_equal(cla.arange(queue, 0, 1000, 1, dtype=np.int64).get(), np.arange(1000))


def test_elementwise_kernel(ctx, queue, rng):
    lin = ElementwiseKernel(ctx, "float a, float *x, float *y, float *z", "z[i] = a*x[i] + y[i]*y[i]", "lin")
    x = rng.standard_normal(12345).astype(np.float32)
    y = rng.standard_normal(12345).astype(np.float32)
    dx, dy = cla.to_device(queue, x), cla.to_device(queue, y)
    dz = cla.empty_like(dx)
    lin(np.float32(0.5), dx, dy, dz)
    np.testing.assert_allclose(dz.get(), 0.5 * x + y * y, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", [1, 255, 256, 1000, 1 << 20])
def test_sum_reduction(queue, n, rng):
    a = rng.integers(0, 100, n).astype(np.float32)  # integers: exact in float
    assert cla.sum(cla.to_device(queue, a)).get() == a.sum(dtype=np.float64)
    b = rng.integers(-50, 50, n).astype(np.int64)
    assert cla.sum(cla.to_device(queue, b)).get() == b.sum()


def test_min_max_dot(queue, rng):
    a = rng.standard_normal(77_777).astype(np.float32)
    b = rng.standard_normal(77_777).astype(np.float32)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    assert cla.max(da).get() == a.max()
    assert cla.min(da).get() == a.min()
    np.testing.assert_allclose(cla.dot(da, db).get(), np.dot(a.astype(np.float64), b), rtol=1e-4)


def test_reduction_kernel(ctx, queue, rng):
    sumsq = ReductionKernel(ctx, np.float64, neutral="0", reduce_expr="a+b",
                            map_expr="(double)x[i]*(double)x[i]", arguments="__global const float *x")
    x = rng.standard_normal(300_001).astype(np.float32)
    np.testing.assert_allclose(sumsq(cla.to_device(queue, x)).get(), np.sum(x.astype(np.float64) ** 2), rtol=1e-10)


@pytest.mark.parametrize("n", [1, 100, 4097, 200_000])
def test_inclusive_and_exclusive_scan(ctx, queue, n, rng):
    a = rng.integers(0, 10, n).astype(np.int32)
    da = cla.to_device(queue, a)
    InclusiveScanKernel(ctx, np.int32, "a+b", neutral="0")(da)
    np.testing.assert_array_equal(da.get(), np.cumsum(a))
    db = cla.to_device(queue, a)
    ExclusiveScanKernel(ctx, np.int32, "a+b", "0")(db)
    np.testing.assert_array_equal(db.get(), np.concatenate([[0], np.cumsum(a)[:-1]]))


def test_generic_scan_stream_compaction(ctx, queue, rng):
    # Keep the positive entries (a classic GenericScanKernel use: scan flags, scatter).
    knl = GenericScanKernel(
        ctx, np.int32,
        arguments="__global int *ary, __global int *out",
        input_expr="(ary[i] > 0) ? 1 : 0",
        scan_expr="a+b", neutral="0",
        output_statement="if (prev_item != item) out[item - 1] = ary[i];",
    )
    a = rng.integers(-5, 5, 50_000).astype(np.int32)
    da = cla.to_device(queue, a)
    out = cla.zeros(queue, a.shape, np.int32)
    knl(da, out)
    kept = a[a > 0]
    np.testing.assert_array_equal(out.get()[: kept.size], kept)


def test_double_precision_arrays(device, queue, rng):
    if "cl_khr_fp64" not in device.extensions.split():
        pytest.skip("no cl_khr_fp64")
    a = rng.standard_normal(65_537)
    b = rng.standard_normal(65_537)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    np.testing.assert_array_equal((da * db + da).get(), a * b + a)
    np.testing.assert_allclose(clmath.sqrt(abs(da)).get(), np.sqrt(np.abs(a)), rtol=1e-15)
    np.testing.assert_allclose(cla.sum(da).get(), a.sum(), rtol=1e-12)
