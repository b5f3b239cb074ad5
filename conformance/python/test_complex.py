"""pyopencl's complex numbers on the driver: pyopencl.array arithmetic and clmath on
complex64/complex128 (both built on the `cfloat_*`/`cdouble_*` inline functions of
pyopencl-complex.h), element-wise kernels calling those functions, and reductions,
compared with numpy."""

import numpy as np
import pyopencl.array as cla
import pyopencl.clmath as clmath
import pytest
from pyopencl.elementwise import ElementwiseKernel
from pyopencl.reduction import ReductionKernel

# Relative tolerance per dtype: a few ulp of the real type (transcendental functions
# compose several built-ins).
TOL = {np.complex64: 2e-5, np.complex128: 1e-12}


def random_complex(rng, n, dtype):
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)


def close(got, want, dtype, scale=1.0):
    """Compares complex arrays by |got - want| relative to |want| (and 1 near zero)."""
    got = np.asarray(got)
    assert got.dtype == dtype, got.dtype
    err = np.abs(got.astype(np.complex128) - want) / np.maximum(np.abs(want), 1.0)
    worst = int(np.argmax(err))
    assert err[worst] <= TOL[dtype] * scale, (
        f"at {worst}: got {got[worst]}, want {want[worst]} (error {err[worst]:.3g})"
    )


@pytest.fixture()
def rng():
    return np.random.default_rng(11)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_array_arithmetic(queue, rng, dtype):
    n = 10_007
    a = random_complex(rng, n, dtype)
    b = random_complex(rng, n, dtype)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    wa, wb = a.astype(np.complex128), b.astype(np.complex128)
    close((da + db).get(), wa + wb, dtype)
    close((da - db).get(), wa - wb, dtype)
    close((da * db).get(), wa * wb, dtype)
    close((da / db).get(), wa / wb, dtype, scale=4)
    s = dtype(1.5 - 0.25j)
    close((da * s + 2).get(), wa * complex(s) + 2, dtype)
    close((3 / da).get(), 3 / wa, dtype, scale=4)
    close(da.conj().get(), np.conj(wa), dtype)
    real = a.real.dtype.type
    np.testing.assert_array_equal(da.real.get(), a.real)
    np.testing.assert_array_equal(da.imag.get(), a.imag)
    np.testing.assert_allclose(abs(da).get(), np.abs(wa), rtol=TOL[dtype] * 2)
    assert abs(da).get().dtype == real
    # Mixed real and complex operands.
    r = rng.standard_normal(n).astype(real)
    dr = cla.to_device(queue, r)
    close((da * dr).get(), wa * r, dtype)
    close((dr + da).get(), r + wa, dtype)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", ["sqrt", "exp", "log", "sin", "cos", "tan", "sinh", "cosh", "tanh"])
def test_clmath(queue, rng, dtype, name):
    a = random_complex(rng, 4099, dtype)
    got = getattr(clmath, name)(cla.to_device(queue, a)).get()
    want = getattr(np, name)(a.astype(np.complex128))
    # pyopencl-complex.h computes tan and tanh as a quotient that loses ~6 bits near
    # their poles (Intel's CPU runtime gives the same results).
    close(got, want, dtype, scale=64 if name in ("tan", "tanh") else 8)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_power(queue, rng, dtype):
    a = random_complex(rng, 2048, dtype)
    b = random_complex(rng, 2048, dtype) * 0.5
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    wa, wb = a.astype(np.complex128), b.astype(np.complex128)
    close((da ** db).get(), wa ** wb, dtype, scale=64)
    close((da ** 2).get(), wa ** 2, dtype, scale=8)


@pytest.mark.parametrize("tp,dtype", [("cfloat", np.complex64), ("cdouble", np.complex128)])
def test_elementwise_kernel_with_complex_functions(ctx, queue, rng, tp, dtype):
    kernel = ElementwiseKernel(
        ctx,
        f"{tp}_t *z, {tp}_t *x, {tp}_t *y",
        f"z[i] = {tp}_add({tp}_mul(x[i], y[i]), {tp}_sqrt({tp}_divide(x[i], y[i])))",
        f"complex_mix_{tp}",
        preamble="#include <pyopencl-complex.h>",
    )
    x = random_complex(rng, 5000, dtype)
    y = random_complex(rng, 5000, dtype)
    dx, dy = cla.to_device(queue, x), cla.to_device(queue, y)
    dz = cla.empty_like(dx)
    kernel(dz, dx, dy)
    wx, wy = x.astype(np.complex128), y.astype(np.complex128)
    close(dz.get(), wx * wy + np.sqrt(wx / wy), dtype, scale=8)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_reductions(ctx, queue, rng, dtype):
    # Small integers: sums are exact in either precision.
    a = (rng.integers(-20, 20, 30_000) + 1j * rng.integers(-20, 20, 30_000)).astype(dtype)
    b = (rng.integers(-5, 5, 30_000) + 1j * rng.integers(-5, 5, 30_000)).astype(dtype)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    assert cla.sum(da).get() == a.astype(np.complex128).sum()
    assert cla.dot(da, db).get() == (a.astype(np.complex128) * b).sum()
    assert cla.vdot(da, db).get() == np.vdot(a.astype(np.complex128), b)
    tp = "cfloat" if dtype == np.complex64 else "cdouble"
    norm2 = ReductionKernel(
        ctx, np.float64, neutral="0", reduce_expr="a+b",
        map_expr=f"{tp}_abs_squared(x[i])", arguments=f"{tp}_t *x",
        preamble="#include <pyopencl-complex.h>",
    )
    assert norm2(da).get() == (np.abs(a.astype(np.complex128)) ** 2).sum()
