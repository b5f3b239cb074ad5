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


for ty in ('f32', 'f64'):
    emit_unary(ty)
    emit_binary(ty)
    emit_int_exp(ty)
sys.stdout.flush()
