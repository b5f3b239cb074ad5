#!/usr/bin/env python3
"""Generates reference.txt: high-precision (mpmath, 256-bit) results of the OpenCL
math functions at pseudo-random points, for the jit builtins tests.

Each line: `<func> <type> <arg1 bits> [<arg2 bits>] <reference f64 bits>` in hex; for
type f32 the arguments are f32 bits, the reference is the exact result rounded to f64
(enough to measure f32 ulps); for f64 it is the exact result correctly rounded to f64.
The integer operand of pown/rootn is written in decimal. Rerun with
`python3 gen_reference.py > reference.txt` (needs mpmath); the seed is fixed.
"""
import random
import struct
import sys

import mpmath
from mpmath import mp, mpf
from mpmath.libmp import to_float

mp.prec = 256
rng = random.Random(20261122)

F32_MAX = struct.unpack('<f', struct.pack('<I', 0x7f7fffff))[0]


def f32(x):
    """Nearest f32 to the Python float x (None if it overflows)."""
    try:
        return struct.unpack('<f', struct.pack('<f', x))[0]
    except OverflowError:
        return None


def bits(x, ty):
    if ty == 'f32':
        return '%08x' % struct.unpack('<I', struct.pack('<f', x))[0]
    return '%016x' % struct.unpack('<Q', struct.pack('<d', x))[0]


def round_f64(v):
    """Correctly rounded f64 of an mpf (inf on overflow)."""
    if mpmath.isinf(v):
        return float(v)
    if abs(v) >= mpf(2) ** 1024:
        return float('inf') if v > 0 else float('-inf')
    # Subnormals: round at the fixed 2^-1074 grid.
    if v != 0 and abs(v) < mpf(2) ** -1022:
        q = mpmath.nint(v * mpf(2) ** 1074)
        return float(q) * 2.0 ** -1074
    return to_float(v._mpf_, rnd='n')


def sample(lo, hi, n, ty, log_scale=True):
    if ty == 'f32':
        lo, hi = max(lo, -F32_MAX), min(hi, F32_MAX)
    out = []
    for i in range(n):
        if log_scale and i % 2 == 1:
            m = max(abs(lo), abs(hi))
            tiny = 1e-40 if ty == 'f32' else 1e-300
            x = 10 ** rng.uniform(mpmath.log10(tiny), mpmath.log10(m))
            x = float(x)
            if lo < 0 and rng.random() < 0.5:
                x = -x
            if not (lo <= x <= hi):
                x = rng.uniform(lo, hi)
        else:
            x = rng.uniform(lo, hi)
        if ty == 'f32':
            x = f32(x)
            if x is None:
                continue
        out.append(x)
    return out


def pi_fn(f):
    return lambda x: f(x) / mpmath.pi


def tanpi(x):
    return mpmath.sinpi(x) / mpmath.cospi(x)


def lgamma(x):
    return mpmath.log(abs(mpmath.gamma(x)))


def cbrt(x):
    return mpmath.cbrt(x) if x >= 0 else -mpmath.cbrt(-x)


def rootn(x, n):
    r = mpmath.root(abs(x), n) if n > 0 else 1 / mpmath.root(abs(x), -n)
    return -r if x < 0 else r


UNARY = {
    'acos': (mpmath.acos, [(-1, 1)]),
    'acosh': (mpmath.acosh, [(1, 1e300)]),
    'acospi': (pi_fn(mpmath.acos), [(-1, 1)]),
    'asin': (mpmath.asin, [(-1, 1)]),
    'asinh': (mpmath.asinh, [(-1e300, 1e300), (-2, 2)]),
    'asinpi': (pi_fn(mpmath.asin), [(-1, 1)]),
    'atan': (mpmath.atan, [(-1e300, 1e300), (-4, 4)]),
    'atanh': (mpmath.atanh, [(-1, 1)]),
    'atanpi': (pi_fn(mpmath.atan), [(-1e300, 1e300), (-4, 4)]),
    'cbrt': (cbrt, [(-1e300, 1e300)]),
    'cos': (mpmath.cos, [(-10, 10), (-1e30, 1e30)]),
    'cosh': (mpmath.cosh, [(-700, 700), (-5, 5)]),
    'cospi': (mpmath.cospi, [(-4, 4), (-1e17, 1e17)]),
    'erf': (mpmath.erf, [(-6, 6)]),
    'erfc': (mpmath.erfc, [(-6, 27)]),
    'exp': (mpmath.exp, [(-745, 709), (-2, 2)]),
    'exp2': (lambda x: mpf(2) ** x, [(-1074, 1023), (-2, 2)]),
    'exp10': (lambda x: mpf(10) ** x, [(-323, 308), (-2, 2)]),
    'expm1': (mpmath.expm1, [(-40, 709), (-1, 1)]),
    'log': (mpmath.log, [(1e-300, 1e300), (0.5, 2)]),
    'log2': (mpmath.log, [(1e-300, 1e300), (0.5, 2)]),
    'log10': (mpmath.log10, [(1e-300, 1e300), (0.5, 2)]),
    'log1p': (mpmath.log1p, [(-0.99, 1e300), (-0.5, 0.5)]),
    'rsqrt': (lambda x: 1 / mpmath.sqrt(x), [(1e-300, 1e300)]),
    'sin': (mpmath.sin, [(-10, 10), (-1e30, 1e30)]),
    'sinh': (mpmath.sinh, [(-700, 700), (-5, 5)]),
    'sinpi': (mpmath.sinpi, [(-4, 4), (-1e17, 1e17)]),
    'tan': (mpmath.tan, [(-10, 10), (-1e30, 1e30)]),
    'tanh': (mpmath.tanh, [(-30, 30), (-2, 2)]),
    'tanpi': (tanpi, [(-4, 4), (-1e17, 1e17)]),
    'tgamma': (mpmath.gamma, [(-170.5, 171.6), (0.01, 10)]),
    'lgamma': (lgamma, [(0.01, 1e300), (-50.5, 50)]),
}
UNARY['log2'] = (lambda x: mpmath.log(x, 2), UNARY['log2'][1])

BINARY = {
    'atan2': (mpmath.atan2, (-1e300, 1e300), (-1e300, 1e300)),
    'atan2pi': (lambda y, x: mpmath.atan2(y, x) / mpmath.pi, (-1e300, 1e300), (-1e300, 1e300)),
    'hypot': (mpmath.hypot, (-1e300, 1e300), (-1e300, 1e300)),
    'pow': (lambda x, y: mpmath.power(x, y), (0, 1e10), (-60, 60)),
    'powr': (lambda x, y: mpmath.power(x, y), (0, 1e10), (-60, 60)),
}

N = 200


def emit_unary(ty):
    for name, (f, doms) in UNARY.items():
        for lo, hi in doms:
            if ty == 'f32':
                lo, hi = max(lo, -F32_MAX), min(hi, F32_MAX)
            for x in sample(lo, hi, N // len(doms), ty):
                if name in ('tgamma', 'lgamma') and x <= 0 and x == int(x):
                    continue
                if name == 'tanpi' and (2 * x) == int(2 * x) and x != int(x):
                    continue
                v = f(mpf(x))
                if isinstance(v, mpmath.mpc) or mpmath.isnan(v):
                    continue
                print(name, ty, bits(x, ty), bits(round_f64(v), 'f64'))


def emit_binary(ty):
    for name, (f, (xlo, xhi), (ylo, yhi)) in BINARY.items():
        for _ in range(N):
            xs = sample(xlo, xhi, 2, ty)
            ys = sample(ylo, yhi, 2, ty)
            x, y = xs[rng.randrange(len(xs))], ys[rng.randrange(len(ys))]
            v = f(mpf(x), mpf(y))
            if isinstance(v, mpmath.mpc) or mpmath.isnan(v):
                continue
            print(name, ty, bits(x, ty), bits(y, ty), bits(round_f64(v), 'f64'))


def emit_int_exp(ty):
    for _ in range(N):
        x = sample(-1e10, 1e10, 2, ty)[rng.randrange(2)]
        n = rng.choice([-9, -5, -3, -2, -1, 1, 2, 3, 4, 5, 7, 10, 31])
        if x == 0:
            continue
        v = mpmath.power(x, n)
        print('pown', ty, bits(x, ty), n, bits(round_f64(v), 'f64'))
    for _ in range(N):
        x = sample(-1e300, 1e300, 2, ty)[rng.randrange(2)]
        if ty == 'f32' and abs(x) > F32_MAX:
            continue
        n = rng.choice([-9, -5, -4, -3, -2, -1, 1, 2, 3, 4, 5, 7, 10, 31, 1000, -1000])
        if x == 0 or (x < 0 and n % 2 == 0):
            continue
        v = rootn(mpf(x), n)
        print('rootn', ty, bits(x, ty), n, bits(round_f64(v), 'f64'))


def near(points, js=range(1, 60, 3)):
    """Points and their neighbours at distances 2^-j."""
    out = []
    for p in points:
        out.append(p)
        for j in js:
            out += [p + 2.0 ** -j, p - 2.0 ** -j]
    return out


# Hand-picked hard arguments: near zeros, poles, range ends and the subnormal range.
HARD_UNARY = {
    'sinpi': near([0, 0.25, 0.5, 1, 1.5, 2, -1, -3.5, 1e6, 2.0 ** 40]) + [2.0 ** -1074, 2.0 ** -1000],
    'cospi': near([0, 0.25, 0.5, 1, 1.5, 2, -1, -3.5, 1e6, 2.0 ** 40]) + [2.0 ** -1074],
    'tanpi': [x for x in near([0, 0.25, 0.5, 1, 1.5, -0.5, -2.5, 1e6 + 0.5])
              if not (2 * x == int(2 * x) and x != int(x))],
    'exp10': [308.25, 308.254, 308.2547, -307.5, -307.65, -310.3, -320.0, -323.3, 1e-20,
              0.3010299956639812, -0.3010299956639812, 22.5, -22.5, 15.9, 16.1],
    'exp': [709.78, 709.7827128933839, -708.39, -745.1, -744.5, -740.0, 1e-300],
    'exp2': [1023.99, -1022.5, -1074.0, -1073.5, -1060.3, 1e-300],
    'expm1': [709.78, -1e-300, 1e-20, -37.0, 2.0 ** -30],
    'log': near([1], range(1, 53, 4)) + [2.0 ** -1074, 2.0 ** -1030, 1.7e308],
    'log2': near([1], range(1, 53, 4)) + [2.0 ** -1074, 3.0 * 2.0 ** -1060],
    'log10': near([1], range(1, 53, 4)) + [2.0 ** -1074, 1e-310, 1e22, 1e-5],
    'log1p': [-1 + 2.0 ** -j for j in range(1, 53, 2)] + [2.0 ** -1074, -2.0 ** -1000, 1e308],
    'acosh': [1 + 2.0 ** -j for j in range(1, 53, 2)] + [1.7e308],
    'atanh': [1 - 2.0 ** -j for j in range(1, 54, 2)] + [2.0 ** -1074, -(1 - 2.0 ** -50)],
    'asinpi': [1 - 2.0 ** -j for j in range(1, 54, 4)] + [2.0 ** -1074, 2.0 ** -1022, -3e-310],
    'acospi': [1 - 2.0 ** -j for j in range(1, 54, 4)] + [-(1 - 2.0 ** -j) for j in range(1, 54, 4)],
    'atanpi': [2.0 ** -1074, 2.0 ** -1022, 1e300, -1e-300, 1.0, -1.0],
    'cbrt': [2.0 ** -1074, 3 * 2.0 ** -1070, -1e-310, 27.0, -8.0, 1.7e308],
    'rsqrt': [2.0 ** -1074, 2.0 ** -1073, 5e-324 * 7, 1.7e308, 4.0, 2.0],
    'erfc': [26.5, 27.2, 27.3, 10.0, -5.9, 0.47, 1e-300],
    'erf': [2.0 ** -1074, 1e-300, 5.9, 0.47, -0.8],
    'tgamma': [-k + d for k in (1, 2, 5, 20, 100, 170) for d in (2.0 ** -20, 0.5, 1 - 2.0 ** -20)]
              + [171.6, 171.62, 2.0 ** -1000, 2.0 ** -1074, -170.99, -171.5, 0.5, 1.5, 1e-8],
    'sin': [1e22, 1e300, 2.0 ** 1000, 3.141592653589793, 6.283185307179586, 2.0 ** -1074],
    'cos': [1e22, 1e300, 1.5707963267948966, 2.0 ** 1000, 2.0 ** -1074],
    'tan': [1e22, 1e300, 1.5707963267948966, 2.0 ** -1074],
    'sinh': [710.47, 710.5, 2.0 ** -1074, 1e-9],
    'cosh': [710.47, 710.5, 1e-9],
    'tanh': [2.0 ** -1074, 19.0, 22.0, 1e-9],
    'asinh': [2.0 ** -1074, 1e-9, 1.7e308],
}
HARD_BINARY = {
    'hypot': [(1e308, 1e308), (3e-320, 4e-320), (1e300, 1e-300), (2.0 ** -1074, 2.0 ** -1074),
              (1.7e308, 1e292), (3.0, 4.0)],
    'atan2pi': [(1e-310, 1e300), (1e-300, -1.0), (-1e-300, -1.0), (1.0, -1e-300), (3.0, 3.0),
                (1e300, 1e-300), (-2.0 ** -1074, 1.0)],
    'atan2': [(1e-310, 1e300), (1e-300, -1.0), (1.0, -1e-300), (2.0 ** -1074, 3.0)],
    'pow': [(1 + 2.0 ** -40, 2.0 ** 50), (0.5, 1074.0), (2.0, -1074.5), (10.0, 308.25),
            (1 - 2.0 ** -53, 2.0 ** 60), (2.0 ** -1074, 0.5), (1.7e308, 0.999), (7.0, 364.0)],
    'powr': [(1 + 2.0 ** -40, 2.0 ** 50), (0.5, 1074.0), (10.0, 308.25), (2.0 ** -1074, 0.5)],
}
HARD_INT = {
    'rootn': [(2.0 ** 1023 * 1.999, 1000), (2.0 ** 1023 * 1.999, 7), (2.0 ** -1074, -3),
              (2.0 ** -1074, 7), (2.0, 2147483647), (2.0, -2147483648), (1e300, 2),
              (-1e300, 3), (-1e-310, -5), (7.0, 3), (1.7e308, -2)],
    'pown': [(2.0, -1074), (2.0, 1023), (1.0000001, 100000), (-3.0, 101), (10.0, -323),
             (0.999999, -1000000)],
}


def f32_ok(x):
    """x as f32 if it is representable without overflow, else None."""
    y = f32(x)
    return y if y is not None and abs(y) != float('inf') else None


def emit_hard(ty):
    conv = (lambda x: f32_ok(x)) if ty == 'f32' else (lambda x: x)
    for name, xs in HARD_UNARY.items():
        f = UNARY[name][0]
        for x in xs:
            x = conv(x)
            if x is None:
                continue
            if name == 'tanpi' and 2 * x == int(2 * x) and x != int(x):
                continue
            if name == 'tgamma' and x <= 0 and x == int(x):
                continue
            try:
                v = f(mpf(x))
            except ZeroDivisionError:
                continue
            if isinstance(v, mpmath.mpc) or mpmath.isnan(v):
                continue
            print(name, ty, bits(x, ty), bits(round_f64(v), 'f64'))
    for name, xys in HARD_BINARY.items():
        f = BINARY[name][0]
        for x, y in xys:
            x, y = conv(x), conv(y)
            # mpmath has no signed zero: zero operands are covered by the Rust tests.
            if x is None or y is None or x == 0 or y == 0:
                continue
            v = f(mpf(x), mpf(y))
            if isinstance(v, mpmath.mpc) or mpmath.isnan(v):
                continue
            print(name, ty, bits(x, ty), bits(y, ty), bits(round_f64(v), 'f64'))
    for name, xns in HARD_INT.items():
        for x, n in xns:
            x = conv(x)
            if x is None or x == 0:
                continue
            v = rootn(mpf(x), n) if name == 'rootn' else mpmath.power(mpf(x), n)
            print(name, ty, bits(x, ty), n, bits(round_f64(v), 'f64'))


for ty in ('f32', 'f64'):
    emit_unary(ty)
    emit_binary(ty)
    emit_int_exp(ty)
    emit_hard(ty)
sys.stdout.flush()
