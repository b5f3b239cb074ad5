"""pyopencl.clmath: every function on float32 and float64 arrays against numpy/scipy,
at pyopencl's own tolerances where its test suite states one and at the OpenCL C
specification's ULP bounds otherwise; odd sizes and arrays at an offset; the Bessel
and Hankel functions against scipy (complex ones are in test_complex.py)."""

import math

import mpmath
import numpy as np
import pyopencl.array as cla
import pyopencl.clmath as clmath
import pytest
import scipy.special as sp
from pyopencl.elementwise import ElementwiseKernel

from conftest import budgeted, has_fp64, require

REAL = [np.float32, np.float64]
SIZES = [1, 10, 127, 1 << 13]


def need(device, dtype):
    if np.dtype(dtype) == np.float64:
        require(has_fp64(device), "cl_khr_fp64")


def _sin_pi_reduced(a):
    """sin(pi a) for a in [0, 1/2], without the error pi's rounding makes near 1/2."""
    return np.where(a <= 0.25, np.sin(np.pi * a), np.cos(np.pi * (0.5 - a)))


def sinpi(x):
    r = x - 2 * np.round(x / 2)  # exact: r in [-1, 1]
    a = np.abs(r)
    a = np.where(a > 0.5, 1 - a, a)  # exact
    return np.sign(r) * _sin_pi_reduced(a)


def cospi(x):
    r = np.abs(x - 2 * np.round(x / 2))  # [0, 1]
    return np.where(r <= 0.5, _sin_pi_reduced(0.5 - r), -_sin_pi_reduced(r - 0.5))


def precise(f):
    """A function of mpmath (80-bit) element-wise: scipy's float64 special functions
    are themselves up to ~16 ulp off in places (erfc's tail), too coarse to judge a
    double result against the spec's bound."""
    def ref(x):
        with mpmath.workprec(80):
            return np.array([float(f(mpmath.mpf(float(v)))) for v in x])
    return ref


# name: (range, numpy/scipy reference on float64, bound). A float bound is pyopencl's
# (test_clmath.py: maximum absolute error over the range, float32 and float64 alike);
# an int bound is the OpenCL C spec's ULP limit for float (doubles get the same count
# in double ULPs; the spec is tighter or equal for most).
FUNCS = {
    "ceil": ((-10, 10), np.ceil, 0),
    "floor": ((-10, 10), np.floor, 0),
    "trunc": ((-10, 10), np.trunc, 0),
    "rint": ((-10, 10), np.rint, 0),
    "round": ((-10, 10), lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), 0),
    "fabs": ((-10, 10), np.abs, 0),
    "exp": ((-3, 3), np.exp, 1e-5),
    "log": ((1e-5, 1), np.log, 1e-6),
    "log10": ((1e-5, 1), np.log10, 5e-7),
    "sqrt": ((1e-5, 1), np.sqrt, 3e-7),
    "sin": ((-10, 10), np.sin, 2e-7),
    "cos": ((-10, 10), np.cos, 2e-7),
    "asin": ((-0.9, 0.9), np.arcsin, 5e-7),
    "acos": ((-0.9, 0.9), np.arccos, 5e-7),
    "tan": ((-math.pi / 2 + 0.1, math.pi / 2 - 0.1), np.tan, 4e-5),
    "atan": ((-10, 10), np.arctan, 2e-7),
    "sinh": ((-3, 3), np.sinh, 3e-6),
    "cosh": ((-3, 3), np.cosh, 3e-6),
    "tanh": ((-3, 3), np.tanh, 2e-6),
    "acosh": ((1, 50), np.arccosh, 4),
    "asinh": ((-50, 50), np.arcsinh, 4),
    "atanh": ((-0.99, 0.99), np.arctanh, 5),
    "acospi": ((-1, 1), lambda x: np.arccos(x) / np.pi, 5),
    "asinpi": ((-1, 1), lambda x: np.arcsin(x) / np.pi, 5),
    "atanpi": ((-50, 50), lambda x: np.arctan(x) / np.pi, 5),
    "cospi": ((-4, 4), cospi, 4),
    "sinpi": ((-4, 4), sinpi, 4),
    "tanpi": ((-0.45, 0.45), lambda x: sinpi(x) / cospi(x), 6),
    "cbrt": ((-100, 100), np.cbrt, 2),
    "exp2": ((-20, 20), np.exp2, 3),
    "exp10": ((-9, 9), lambda x: 10.0**x, 3),
    "expm1": ((-3, 3), np.expm1, 3),
    "log2": ((1e-5, 1e5), np.log2, 3),
    "log1p": ((-0.9, 10), np.log1p, 2),
    "logb": ((1e-30, 1e30), lambda x: np.frexp(x)[1] - 1.0, 0),
    "ilogb": ((1e-30, 1e30), lambda x: np.frexp(x)[1] - 1.0, 0),
    "erf": ((-4, 4), sp.erf, 16),
    "erfc": ((-4, 9), sp.erfc, 16),
    "tgamma": ((0.1, 20), sp.gamma, 16),
    # the spec sets no bound for lgamma: a relative 1e-5 / 1e-12 away from its zeros
    "lgamma": ((2.5, 40), sp.gammaln, None),
}
DOUBLE_REFERENCE = {"erf": precise(mpmath.erf), "erfc": precise(mpmath.erfc), "tgamma": precise(mpmath.gamma)}


def check(name, got, want, dtype, bound):
    want_t = want.astype(dtype)
    assert got.dtype == np.dtype(dtype), got.dtype
    if bound is None:
        rtol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol, err_msg=name)
    elif isinstance(bound, float):
        err = np.max(np.abs(got - want)) if got.size else 0.0
        assert err <= bound, (name, dtype, err)
    else:
        ulp = np.spacing(np.abs(want_t)).astype(np.float64)
        err = np.abs(got.astype(np.float64) - want)
        bad = np.flatnonzero(err > (bound + 0.5) * ulp)
        assert bad.size == 0, (
            f"{name} {np.dtype(dtype)}: {bad.size} beyond {bound} ulp, e.g. f({want.size and bad[0]}) = "
            f"{got[bad[0]]!r}, want {want[bad[0]]!r}"
        )


def arguments(queue, lo, hi, size, dtype, bound):
    # pyopencl's own inputs where its tolerance applies; spread over the exponents
    # for wide ranges otherwise
    if not isinstance(bound, float) and lo > 0 and hi / lo > 1e3:
        host = np.geomspace(lo, hi, size).astype(dtype)
        return cla.to_device(queue, host)
    return cla.arange(queue, lo, hi, (hi - lo) / size, dtype=dtype)[:size]


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("name", list(FUNCS))
def test_unary_function(queue, device, name, dtype):
    need(device, dtype)
    (lo, hi), ref, bound = FUNCS[name]
    for size in SIZES:
        args = arguments(queue, lo, hi, size, dtype, bound)
        got = getattr(clmath, name)(args).get()
        x = args.get()
        assert x.size == size
        if dtype == np.float64:
            ref = DOUBLE_REFERENCE.get(name, ref)
        check(name, got, ref(x.astype(np.float64)), dtype, bound)


@pytest.mark.parametrize("dtype", REAL)
def test_function_on_an_offset_view(queue, device, rng, dtype):
    # the array's offset into its buffer reaches the kernel
    need(device, dtype)
    host = rng.uniform(-5, 5, 10_007).astype(dtype)
    dev = cla.to_device(queue, host)
    view = dev[1234:9001]
    np.testing.assert_allclose(clmath.sin(view).get(), np.sin(host[1234:9001]), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(clmath.floor(dev[7:]).get(), np.floor(host[7:]))


@pytest.mark.parametrize("dtype", REAL)
def test_atan2_and_atan2pi(queue, device, dtype):
    need(device, dtype)
    for s in SIZES:
        a = (cla.arange(queue, s, dtype=dtype) - dtype(s / 2)) / 100
        b = (s / 2 - 1 - cla.arange(queue, s, dtype=dtype)) / 100
        y, x = a.get().astype(np.float64), b.get().astype(np.float64)
        assert np.max(np.abs(clmath.atan2(a, b).get() - np.arctan2(y, x)), initial=0) < 1e-6
        assert np.max(np.abs(clmath.atan2pi(a, b).get() - np.arctan2(y, x) / np.pi), initial=0) < 1e-6


@pytest.mark.parametrize("dtype", REAL)
def test_fmod(queue, device, dtype):
    need(device, dtype)
    for s in SIZES:
        a = cla.arange(queue, s, dtype=dtype) / 10
        b = cla.arange(queue, s, dtype=dtype) / 45.2 + 0.1
        got = clmath.fmod(a, b).get()
        # fmod is exact: the spec demands 0 ulp
        np.testing.assert_array_equal(got, np.fmod(a.get(), b.get()))


@pytest.mark.parametrize("dtype", REAL)
def test_ldexp_frexp_modf(queue, device, dtype):
    need(device, dtype)
    for s in SIZES:
        a = cla.arange(queue, s, dtype=dtype) - dtype(s // 3)
        e = cla.arange(queue, s, dtype=dtype) * dtype(1e-2) - dtype(20)
        got = clmath.ldexp(a, e).get()
        np.testing.assert_array_equal(got, np.ldexp(a.get(), e.get().astype(np.int32)))
        x = cla.arange(queue, s, dtype=dtype) / 10 - dtype(s / 20)
        sig, expo = clmath.frexp(x)
        want_sig, want_exp = np.frexp(x.get())
        np.testing.assert_array_equal(sig.get(), want_sig)
        np.testing.assert_array_equal(expo.get(), want_exp)
        frac, whole = clmath.modf(x)
        want_frac, want_whole = np.modf(x.get())
        np.testing.assert_array_equal(whole.get(), want_whole)
        np.testing.assert_array_equal(frac.get(), want_frac)


def test_nan(ctx, queue):
    # clmath.nan keeps its argument's dtype (NaN converted to uint: values undefined);
    # the built-in itself, into floats, is all NaN
    codes = cla.arange(queue, 1, 100, 1, dtype=np.uint32)
    res = clmath.nan(codes)
    assert res.dtype == np.uint32 and res.shape == codes.shape
    res.get()
    out = cla.empty(queue, codes.shape, np.float32)
    ElementwiseKernel(ctx, "float *z, uint *code", "z[i] = nan(code[i])")(out, codes)
    assert np.isnan(out.get()).all()


def test_special_values(queue, device):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3.4e38], dtype=np.float32)
    dx = cla.to_device(queue, x)
    with np.errstate(all="ignore"):
        for name, ref in [("sqrt", np.sqrt), ("exp", np.exp), ("log", np.log), ("sin", np.sin),
                          ("fabs", np.abs), ("floor", np.floor), ("tanh", np.tanh), ("atan", np.arctan)]:
            got = getattr(clmath, name)(dx).get()
            want = ref(x)
            finite = np.isfinite(want)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
            np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)], err_msg=name)
            np.testing.assert_allclose(got[finite], want[finite], rtol=1e-6, atol=0, err_msg=name)
            np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]), err_msg=name)


# {{{ Bessel and Hankel functions

BESSEL_ORDERS = [0, 1, 2, 3, 7, 15, 29]
BESSEL_BUDGET_S = 60  # Intel and PoCL build and run all four kernels in about 6 s

BESSEL_CHILD = f"""
import pyopencl.clmath as clmath
x = np.logspace(-5, 5, 10**5)
z = np.logspace(-5, 2, 10**4) * np.exp(1j * 2 * np.pi * np.random.default_rng(13).random(10**4))
dx, dz = cla.to_device(queue, x), cla.to_device(queue, z)
save("x", x)
save("z", z)
save("j", np.stack([clmath.bessel_jn(n, dx).get() for n in {BESSEL_ORDERS}]))
save("y", np.stack([clmath.bessel_yn(n, dx).get() for n in {BESSEL_ORDERS}]))
save("jc", clmath.bessel_jn(40, dz).get())
h0, h1 = clmath.hankel_01(dz)
save("h0", h0.get())
save("h1", h1.get())
"""


BESSEL = budgeted("bessel", BESSEL_CHILD, BESSEL_BUDGET_S)


@pytest.fixture(scope="module")
def bessel(device):
    require(has_fp64(device), "cl_khr_fp64")
    return BESSEL.wait()


def test_bessel_jn(bessel):
    got = bessel["j"]
    x = bessel["x"]
    for n, row in zip(BESSEL_ORDERS, got):
        assert not np.isnan(row).any()
        err = np.max(np.abs(row - sp.jn(n, x)))
        assert err < 1e-10, (n, err)


def test_bessel_yn(bessel):
    got = bessel["y"]
    x = bessel["x"]
    for n, row in zip(BESSEL_ORDERS, got):
        ref = sp.yn(n, x)
        assert not np.isnan(row).any()
        err = np.max(np.abs(row - ref)) / np.max(np.abs(ref))
        assert err < 1e-10, (n, err)


def relative_error(got, ref):
    err = np.abs(got - ref) / np.abs(ref)
    tiny = np.abs(ref) < 1e-300
    err[tiny] = np.abs(got - ref)[tiny]
    err[~np.isfinite(ref)] = 0
    return np.max(err)


def test_bessel_jn_complex(bessel):
    got = bessel["jc"]
    assert relative_error(got, sp.jv(40, bessel["z"])) <= 2e-13


def test_hankel_01_complex(bessel):
    z = bessel["z"]
    h0, h1 = bessel["h0"], bessel["h1"]
    assert np.max(np.abs(h0 - sp.hankel1(0, z)) / np.abs(sp.hankel1(0, z))) < 4e-13
    assert np.max(np.abs(h1 - sp.hankel1(1, z)) / np.abs(sp.hankel1(1, z))) < 2e-13

# }}}
