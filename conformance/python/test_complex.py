"""Complex numbers through pyopencl: array arithmetic on complex64/complex128 (and
mixed with real arrays and scalars), the complex clmath functions at pyopencl's own
tolerances, and every function of pyopencl-complex.h called from a kernel, compared
with numpy."""

import operator

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.clmath as clmath
import pytest
from pyopencl.elementwise import ElementwiseKernel
from pyopencl.reduction import ReductionKernel

from conftest import has_fp64, require

COMPLEX = [np.complex64, np.complex128]
REAL_OF = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}


def need(device, *dtypes):
    if any(np.dtype(d) in (np.dtype(np.float64), np.dtype(np.complex128)) for d in dtypes):
        require(has_fp64(device), "cl_khr_fp64")


def crandom(rng, n, dtype):
    return (rng.uniform(-4, 4, n) + 1j * rng.uniform(-4, 4, n)).astype(dtype)


def close(got, want, dtype, factor=1.0, what=""):
    """|got - want| within a few units of the type's precision of |want| (plus a
    floor for results near zero)."""
    eps = np.finfo(np.dtype(dtype)).eps if np.dtype(dtype).kind != "c" else np.finfo(REAL_OF[np.dtype(dtype)]).eps
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    err = np.abs(got.astype(np.complex128) - want.astype(np.complex128))
    bound = factor * 16 * eps * (np.abs(want) + 1)
    bad = np.flatnonzero(err > bound)
    assert bad.size == 0, f"{what}{bad.size} of {got.size} off, e.g. at {bad[0]}: {got.flat[bad[0]]} != {want.flat[bad[0]]}"


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("n", [1, 257, 100_003])
def test_complex_array_arithmetic(queue, device, rng, dtype, n):
    need(device, dtype)
    a, b = crandom(rng, n, dtype), crandom(rng, n, dtype)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    s = dtype(1.5 - 2.25j)
    close((da + db).get(), a + b, dtype)
    close((da - db).get(), a - b, dtype)
    close((da * db).get(), a * b, dtype)
    close((da + s).get(), a + s, dtype)
    close((s - da).get(), s - a, dtype)
    close((da * s).get(), a * s, dtype)
    close((-da).get(), -a, dtype)
    close(da.conj().get(), a.conj(), dtype)
    close(abs(da).get(), np.abs(a), REAL_OF[np.dtype(dtype)])
    np.testing.assert_array_equal(da.real.get(), a.real)
    np.testing.assert_array_equal(da.imag.get(), a.imag)
    dc = da.copy()
    dc *= db
    dc += s
    close(dc.get(), a * b + s, dtype)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_array_division_and_powers(queue, device, rng, dtype):
    need(device, dtype)
    a, b = crandom(rng, 4099, dtype), crandom(rng, 4099, dtype)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    s = dtype(-0.5 + 3j)
    close((da / db).get(), a / b, dtype, 4)
    close((da / s).get(), a / s, dtype, 4)
    close((s / da).get(), s / a, dtype, 4)
    close((da / 2.5).get(), a / 2.5, dtype, 4)
    close((da**2).get(), a**2, dtype, 64)
    close((da**db).get(), a**b, dtype, 1e4)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_real_over_complex(queue, device, rng, dtype):
    # cfloat_rdivide: a real numerator over complex arrays
    need(device, dtype)
    a = crandom(rng, 3001, dtype)
    da = cla.to_device(queue, a)
    r = rng.uniform(-3, 3, 3001).astype(REAL_OF[np.dtype(dtype)])
    close((2.5 / da).get(), 2.5 / a, dtype, 4)
    close((cla.to_device(queue, r) / da).get(), r / a, dtype, 4)


@pytest.mark.parametrize(
    ("real", "cplx"),
    [(np.float32, np.complex64), (np.float32, np.complex128), (np.float64, np.complex64), (np.float64, np.complex128)],
)
@pytest.mark.parametrize(
    "op",
    [operator.add, operator.sub, operator.mul, operator.truediv],
    ids=lambda op: op.__name__,
)
def test_mixed_real_and_complex_arrays(queue, device, rng, real, cplx, op):
    # numpy's promotion (complex64 with float64 is complex128) and values, in both
    # operand orders
    need(device, real, cplx)
    r = rng.uniform(0.5, 4, 1001).astype(real)
    c = crandom(rng, 1001, cplx)
    dr, dc = cla.to_device(queue, r), cla.to_device(queue, c)
    for got, want in [(op(dr, dc), op(r, c)), (op(dc, dr), op(c, r))]:
        close(got.get(), want, want.dtype, 4)


# pyopencl's test_clmath: range, max absolute error for complex arguments.
COMPLEX_FUNCS = {
    "exp": ((-3, 3), 1e-5),
    "log": ((1e-5, 1), 1e-6),
    "sqrt": ((1e-5, 1), 3e-7),
    "sin": ((-10, 10), 2e-2),
    "cos": ((-10, 10), 2e-2),
    "tan": ((-np.pi / 2 + 0.1, np.pi / 2 - 0.1), 4e-5),
    "sinh": ((-3, 3), 2e-3),
    "cosh": ((-3, 3), 2e-3),
    "tanh": ((-3, 3), 2e-6),
}
# the ones whose header functions clang does not inline today
@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize(
    "name",
    list(COMPLEX_FUNCS),
)
def test_complex_clmath(queue, device, name, dtype):
    need(device, dtype)
    (lo, hi), threshold = COMPLEX_FUNCS[name]
    for size in [10, 128, 1 << 10, 1 << 13]:
        args = cla.arange(queue, lo, hi, (hi - lo) / size, dtype=dtype)
        args = args + args * dtype(1j)
        got = getattr(clmath, name)(args).get()
        want = getattr(np, name)(args.get())
        assert got.dtype == np.dtype(dtype)
        err = np.max(np.abs(got - want))
        assert err <= threshold, (name, dtype, size, err)


HEADER_KERNEL = """
#define PYOPENCL_DEFINE_CDOUBLE
#include <pyopencl-complex.h>
#define T %(t)s_t
#define F(name) %(t)s_##name
kernel void all_ops(global const T *a, global const T *b, global const %(r)s *s,
                    global T *out, global %(r)s *rout)
{
    size_t i = get_global_id(0);
    T x = a[i], y = b[i];
    %(r)s r = s[i];
    global T *o = out + i * %(nc)d;
    global %(r)s *ro = rout + i * %(nr)d;
    o[0] = F(add)(x, y);      o[1] = F(sub)(x, y);      o[2] = F(mul)(x, y);
    o[3] = F(divide)(x, y);   o[4] = F(addr)(x, r);     o[5] = F(radd)(r, y);
    o[6] = F(mulr)(x, r);     o[7] = F(rmul)(r, y);     o[8] = F(rdivide)(r, y);
    o[9] = F(divider)(x, r);  o[10] = F(neg)(x);        o[11] = F(conj)(x);
    o[12] = F(new)(r, -r);    o[13] = F(fromreal)(r);   o[14] = F(fma)(x, y, x);
    o[15] = F(pow)(x, y);     o[16] = F(powr)(x, r);    o[17] = F(rpow)(r, y);
    o[18] = F(sqrt)(x);       o[19] = F(exp)(x);        o[20] = F(log)(x);
    o[21] = F(sin)(x);        o[22] = F(cos)(x);        o[23] = F(tan)(x);
    o[24] = F(sinh)(x);       o[25] = F(cosh)(x);       o[26] = F(tanh)(x);
    o[27] = %(t)s_cast(y);
    ro[0] = F(real)(x);       ro[1] = F(imag)(x);       ro[2] = F(abs)(x);
    ro[3] = F(abs_squared)(x);
}
"""


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_header_functions(ctx, queue, device, rng, dtype):
    need(device, np.float64)  # the header's cdouble part needs fp64 even for cfloat
    real = REAL_OF[np.dtype(dtype)]
    t = "cfloat" if dtype == np.complex64 else "cdouble"
    rname = "float" if dtype == np.complex64 else "double"
    prg = cl.Program(ctx, HEADER_KERNEL % {"t": t, "r": rname, "nc": 28, "nr": 4}).build()
    n = 1000
    # |x| < 1.5 keeps tan and tanh away from their poles (the header's formulas lose
    # digits there on every device)
    x = (rng.uniform(-1.05, 1.05, n) + 1j * rng.uniform(-1.05, 1.05, n)).astype(dtype)
    y = (rng.uniform(-2, 2, n) + 1j * rng.uniform(-2, 2, n)).astype(dtype)
    r = rng.uniform(0.25, 3, n).astype(real)
    dx, dy, dr = (cla.to_device(queue, v) for v in (x, y, r))
    out = cla.empty(queue, n * 28, dtype)
    rout = cla.empty(queue, n * 4, real)
    prg.all_ops(queue, (n,), None, dx.data, dy.data, dr.data, out.data, rout.data)
    got = out.get().reshape(n, 28)
    want = [x + y, x - y, x * y, x / y, x + r, r + y, x * r, r * y, r / y, x / r, -x, x.conj(),
            r - 1j * r, r + 0j, x * y + x, x**y, x**r, r**y, np.sqrt(x), np.exp(x), np.log(x),
            np.sin(x), np.cos(x), np.tan(x), np.sinh(x), np.cosh(x), np.tanh(x), y]
    factors = [1] * 15 + [1e4] * 3 + [64] * 9 + [1]
    for k, (w, f) in enumerate(zip(want, factors)):
        close(got[:, k], np.asarray(w, dtype=dtype), dtype, f, f"output {k}: ")
    rgot = rout.get().reshape(n, 4)
    close(rgot[:, 0], x.real, real)
    close(rgot[:, 1], x.imag, real)
    close(rgot[:, 2], np.abs(x), real, 4)
    close(rgot[:, 3], np.abs(x) ** 2, real, 4)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_elementwise_kernel(ctx, queue, device, rng, dtype):
    # complex arguments (scalars by value and arrays) in a user ElementwiseKernel
    need(device, dtype)
    t = "cfloat" if dtype == np.complex64 else "cdouble"
    knl = ElementwiseKernel(
        ctx,
        f"{t}_t *z, {t}_t *x, {t}_t *y, {t}_t alpha",
        f"z[i] = {t}_add({t}_mul(alpha, x[i]), {t}_conj(y[i]))",
        "axpy_conj",
    )
    x, y = crandom(rng, 9973, dtype), crandom(rng, 9973, dtype)
    alpha = dtype(0.75 - 1.5j)
    dz = cla.empty(queue, 9973, dtype)
    knl(dz, cla.to_device(queue, x), cla.to_device(queue, y), alpha)
    close(dz.get(), alpha * x + y.conj(), dtype)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_fill_copy_and_astype(queue, device, rng, dtype):
    need(device, dtype)
    val = dtype(3.25 - 7.5j)
    d = cla.empty(queue, (37, 11), dtype).fill(val)
    np.testing.assert_array_equal(d.get(), np.full((37, 11), val))
    host = crandom(rng, 5000, dtype).reshape(50, 100)
    dh = cla.to_device(queue, host)
    np.testing.assert_array_equal(dh.T.get(), host.T)  # Fortran order
    np.testing.assert_array_equal(dh[13:41].get(), host[13:41])  # at an offset
    np.testing.assert_array_equal((dh[13:41] * 2).get(), host[13:41] * 2)
    other = np.complex128 if dtype == np.complex64 else np.complex64
    need(device, other)
    close(dh.astype(other).get(), host.astype(other), other)
    re = cla.to_device(queue, host.real.copy())
    np.testing.assert_array_equal(re.astype(dtype).get(), host.real.astype(dtype))


# {{{ relative-error checks: arithmetic, clmath, powers, kernels, reductions

# Relative tolerance per dtype: a few ulp of the real type (transcendental functions
# compose several built-ins).
TOL = {np.complex64: 2e-5, np.complex128: 1e-12}


def random_complex(gen, n, dtype):
    return (gen.standard_normal(n) + 1j * gen.standard_normal(n)).astype(dtype)


def close_rel(got, want, dtype, scale=1.0):
    """Compares complex arrays by |got - want| relative to |want| (and 1 near zero)."""
    got = np.asarray(got)
    assert got.dtype == dtype, got.dtype
    err = np.abs(got.astype(np.complex128) - want) / np.maximum(np.abs(want), 1.0)
    worst = int(np.argmax(err))
    assert err[worst] <= TOL[dtype] * scale, (
        f"at {worst}: got {got[worst]}, want {want[worst]} (error {err[worst]:.3g})"
    )


@pytest.fixture()
def rng11():
    return np.random.default_rng(11)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_array_arithmetic(queue, rng11, dtype):
    n = 10_007
    a = random_complex(rng11, n, dtype)
    b = random_complex(rng11, n, dtype)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    wa, wb = a.astype(np.complex128), b.astype(np.complex128)
    close_rel((da + db).get(), wa + wb, dtype)
    close_rel((da - db).get(), wa - wb, dtype)
    close_rel((da * db).get(), wa * wb, dtype)
    close_rel((da / db).get(), wa / wb, dtype, scale=4)
    s = dtype(1.5 - 0.25j)
    close_rel((da * s + 2).get(), wa * complex(s) + 2, dtype)
    close_rel((3 / da).get(), 3 / wa, dtype, scale=4)
    close_rel(da.conj().get(), np.conj(wa), dtype)
    real = a.real.dtype.type
    np.testing.assert_array_equal(da.real.get(), a.real)
    np.testing.assert_array_equal(da.imag.get(), a.imag)
    np.testing.assert_allclose(abs(da).get(), np.abs(wa), rtol=TOL[dtype] * 2)
    assert abs(da).get().dtype == real
    # Mixed real and complex operands.
    r = rng11.standard_normal(n).astype(real)
    dr = cla.to_device(queue, r)
    close_rel((da * dr).get(), wa * r, dtype)
    close_rel((dr + da).get(), r + wa, dtype)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", ["sqrt", "exp", "log", "sin", "cos", "tan", "sinh", "cosh", "tanh"])
def test_clmath(queue, rng11, dtype, name):
    a = random_complex(rng11, 4099, dtype)
    got = getattr(clmath, name)(cla.to_device(queue, a)).get()
    want = getattr(np, name)(a.astype(np.complex128))
    # pyopencl-complex.h computes tan and tanh as a quotient that loses ~6 bits near
    # their poles (Intel's CPU runtime gives the same results).
    close_rel(got, want, dtype, scale=64 if name in ("tan", "tanh") else 8)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_power(queue, rng11, dtype):
    a = random_complex(rng11, 2048, dtype)
    b = random_complex(rng11, 2048, dtype) * 0.5
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    wa, wb = a.astype(np.complex128), b.astype(np.complex128)
    close_rel((da ** db).get(), wa ** wb, dtype, scale=64)
    close_rel((da ** 2).get(), wa ** 2, dtype, scale=8)


@pytest.mark.parametrize("tp,dtype", [("cfloat", np.complex64), ("cdouble", np.complex128)])
def test_elementwise_kernel_with_complex_functions(ctx, queue, rng11, tp, dtype):
    kernel = ElementwiseKernel(
        ctx,
        f"{tp}_t *z, {tp}_t *x, {tp}_t *y",
        f"z[i] = {tp}_add({tp}_mul(x[i], y[i]), {tp}_sqrt({tp}_divide(x[i], y[i])))",
        f"complex_mix_{tp}",
        preamble="#include <pyopencl-complex.h>",
    )
    x = random_complex(rng11, 5000, dtype)
    y = random_complex(rng11, 5000, dtype)
    dx, dy = cla.to_device(queue, x), cla.to_device(queue, y)
    dz = cla.empty_like(dx)
    kernel(dz, dx, dy)
    wx, wy = x.astype(np.complex128), y.astype(np.complex128)
    close_rel(dz.get(), wx * wy + np.sqrt(wx / wy), dtype, scale=8)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_reductions(ctx, queue, rng11, dtype):
    # Small integers: sums are exact in either precision.
    a = (rng11.integers(-20, 20, 30_000) + 1j * rng11.integers(-20, 20, 30_000)).astype(dtype)
    b = (rng11.integers(-5, 5, 30_000) + 1j * rng11.integers(-5, 5, 30_000)).astype(dtype)
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

# }}}
