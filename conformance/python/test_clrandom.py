"""pyopencl.clrandom: the Philox and Threefry generators bit for bit against a numpy
implementation of Random123 (random123.py), every dtype pyopencl generates, odd
sizes, seeds and counters, the uniform and normal transforms, their statistics, and
the rand/fill_rand conveniences. The Philox rounds (clang emits OpUMulExtended /
OpIAddCarry for them) also against a plain host implementation."""

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pytest
from pyopencl import clrandom, cltypes
from pyopencl.array import _splay

from conftest import has_fp64, require
from random123 import generator_bits, philox4x32, threefry4x32

GENERATORS = {
    "philox": clrandom.PhiloxGenerator,
    "threefry": clrandom.ThreefryGenerator,
}

# Random123's known-answer vectors (tests/kat_vectors): counter, key, output.
PHILOX_KAT = [
    ([0] * 4, [0] * 2, [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
    ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
    ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0],
     [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
]
THREEFRY_KAT = [
    ([0] * 4, [0] * 4, [0x9C6CA96A, 0xE17EAE66, 0xFC10ECD4, 0x5256A7D8]),
    ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 4, [0x2A881696, 0x57012287, 0xF6C7446E, 0xA16A6732]),
    ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344],
     [0xA4093822, 0x299F31D0, 0x082EFA98, 0xEC4E6C89],
     [0x59CD1DBB, 0xB8879579, 0x86B5D00C, 0xAC8B6D84]),
]


def _column(words):
    return np.array([[w] for w in words], dtype=np.uint64)


def test_reference_matches_random123_kat():
    for ctr, key, want in PHILOX_KAT:
        assert list(philox4x32(_column(ctr), _column(key))[:, 0]) == want
    for ctr, key, want in THREEFRY_KAT:
        assert list(threefry4x32(_column(ctr), _column(key))[:, 0]) == want


KAT_KERNEL = """
#include <pyopencl-random123/%(name)s.cl>
kernel void kat(global const uint *ctr_in, global const uint *key_in, global uint *out)
{
    size_t t = get_global_id(0);
    %(name)s4x32_ctr_t c;
    %(name)s4x32_key_t k;
    for (int j = 0; j < 4; ++j) c.v[j] = ctr_in[4 * t + j];
    for (int j = 0; j < %(key_len)d; ++j) k.v[j] = key_in[%(key_len)d * t + j];
    %(name)s4x32_ctr_t r = %(name)s4x32(c, k);
    for (int j = 0; j < 4; ++j) out[4 * t + j] = r.v[j];
}
"""


@pytest.mark.parametrize("name", ["philox", "threefry"])
def test_random123_headers_known_answers(ctx, queue, name):
    # The bijections themselves, through pyopencl's bundled Random123 headers.
    kat = PHILOX_KAT if name == "philox" else THREEFRY_KAT
    key_len = len(kat[0][1])
    src = KAT_KERNEL % {"name": name, "key_len": key_len}
    prg = cl.Program(ctx, src).build()
    ctr = cla.to_device(queue, np.array([c for c, _, _ in kat], dtype=np.uint32).ravel())
    key = cla.to_device(queue, np.array([k for _, k, _ in kat], dtype=np.uint32).ravel())
    out = cla.empty(queue, 4 * len(kat), np.uint32)
    prg.kat(queue, (len(kat),), None, ctr.data, key.data, out.data)
    np.testing.assert_array_equal(out.get().reshape(-1, 4), np.array([w for _, _, w in kat], dtype=np.uint32))


# (dtype, uint32 draws per output vector of 4, scalars per element)
DTYPES = {
    "int32": (np.int32, 1, 1),
    "int64": (np.int64, 2, 1),
    "float32": (np.float32, 1, 1),
    "float64": (np.float64, 2, 1),
    "float2": (cltypes.float2, 1, 2),
    "float3": (cltypes.float3, 1, 3),
    "float4": (cltypes.float4, 1, 4),
}

SIZES = [1, 7, 303, 10007, 300_001]


def _draws(kind, gen, queue, n_elements, dtype_key):
    """The device's draws for the next fill of n_elements, from the generator state
    before that fill: shape (draws per vector, whole vectors of 4 scalars)."""
    _, calls, per_elem = DTYPES[dtype_key]
    n_scalars = n_elements * per_elem
    (gsize,), _ = _splay(queue.device, n_elements)
    n_vec = -(-n_scalars // 4)
    return generator_bits(kind, gen.key, gen.counter, gsize, n_vec, calls)


def _scalars(ary, dtype_key):
    """The scalars the kernel wrote: pyopencl fills element count x vector width
    consecutive floats (for float3 that is not one element per 16 bytes)."""
    _, _, per_elem = DTYPES[dtype_key]
    host = ary.get()
    if per_elem == 1:
        return host
    return host.view(np.float32).reshape(-1)[: ary.size * per_elem]


def _one_of(got, candidates, what, ulps=0):
    """Every element equals one of the candidate references (C leaves the order in
    which the two draws of a 64-bit value are evaluated open), within `ulps` units in
    the last place (a multiply-add the compiler may contract rounds once or twice)."""
    ok = np.zeros(got.shape, dtype=bool)
    for cand in candidates:
        if ulps:
            ok |= np.abs(got - cand) <= ulps * np.spacing(np.abs(cand).astype(got.dtype))
        else:
            ok |= got == cand
    bad = np.flatnonzero(~ok)
    assert bad.size == 0, (
        f"{what}: {bad.size} of {got.size} differ, first at {bad[0]}: got {got[bad[0]]!r}, "
        f"want one of {[c[bad[0]] for c in candidates]}"
    )


def _expected_uniform(dtype_key, bits, a, b):
    """The uniform transform of pyopencl's kernel, for each order of the draws."""
    scale, shift = b - a, a
    if dtype_key == "int32":
        return [(shift + (bits[0].astype(np.int64) * scale) // 2**32).astype(np.int32)]
    if dtype_key == "int64":
        outs = []
        for first, second in ((0, 1), (1, 0)):
            g1, g2 = bits[first].astype(np.int64), bits[second].astype(np.int64)
            outs.append(shift + g1 * (scale // 2**32) + (g2 * scale) // 2**32)
        return outs
    if dtype_key == "float64":
        outs = []
        for first, second in ((0, 1), (1, 0)):
            x = bits[first].astype(np.float64) * 2.0**-32 + bits[second].astype(np.float64) * 2.0**-64
            outs.append(shift + scale * x)
        return outs
    x = bits[0].astype(np.float32) * np.float32(2.0**-32)
    return [(np.float32(shift) + np.float32(scale) * x).astype(np.float32)]


@pytest.mark.parametrize("dtype_key", list(DTYPES))
@pytest.mark.parametrize("kind", list(GENERATORS))
def test_uniform_bit_exact(ctx, queue, device, kind, dtype_key):
    dtype = DTYPES[dtype_key][0]
    if dtype_key == "float64":
        require(has_fp64(device), "cl_khr_fp64")
    gen = GENERATORS[kind](ctx, seed=1234)
    # scales 1 and 16 are exact (a contracted multiply-add rounds the same), 3 may
    # differ by one rounding; negative shifts
    ranges = [(0, 1), (-8, 8), (4, 7)] if dtype_key[0] == "f" else [(0, 2**31 - 1), (200, 300), (-10**9, 10**9)]
    for size in SIZES:
        for a, b in ranges:
            bits = _draws(kind, gen, queue, size, dtype_key)
            ary = gen.uniform(queue, (size,), dtype, a=a, b=b)
            got = _scalars(ary, dtype_key)
            bits = bits[:, : got.size]
            ulps = 1 if (dtype_key[0] == "f" and b - a == 3) else 0
            _one_of(got, _expected_uniform(dtype_key, bits, a, b), f"{kind} {dtype_key} n={size} [{a},{b})", ulps)
            assert (got >= a).all() and (got <= b).all()


NORMAL_DTYPES = ["float32", "float64", "float2", "float4"]


def _expected_normal(dtype_key, bits, mu, sigma):
    if dtype_key == "float64":
        x = bits[0].astype(np.float64) * 2.0**-32 + bits[1].astype(np.float64) * 2.0**-64
        x2 = bits[1].astype(np.float64) * 2.0**-32 + bits[0].astype(np.float64) * 2.0**-64
        return [_box_muller(x, np.float64), _box_muller(x2, np.float64)], (1e-12, 1e-12)
    x = bits[0].astype(np.float32) * np.float32(2.0**-32)
    return [_box_muller(x, np.float32)], (2e-5, 2e-5)


def _box_muller(x, dtype):
    v = x.reshape(-1, 4)
    two_pi = dtype(2 * np.pi)
    r0 = np.sqrt(-2 * np.log(v[:, 0].astype(np.float64)))
    r1 = np.sqrt(-2 * np.log(v[:, 2].astype(np.float64)))
    t0 = (two_pi * v[:, 1]).astype(np.float64)
    t1 = (two_pi * v[:, 3]).astype(np.float64)
    return np.stack([r0 * np.cos(t0), r0 * np.sin(t0), r1 * np.cos(t1), r1 * np.sin(t1)], axis=1).reshape(-1)


@pytest.mark.parametrize("dtype_key", NORMAL_DTYPES)
@pytest.mark.parametrize("kind", list(GENERATORS))
def test_normal_against_box_muller(ctx, queue, device, kind, dtype_key):
    if dtype_key == "float64":
        require(has_fp64(device), "cl_khr_fp64")
    dtype = DTYPES[dtype_key][0]
    gen = GENERATORS[kind](ctx, seed=99)
    for size in [1, 5, 1031, 100_003]:
        for mu, sigma in [(0, 1), (10, 3)]:
            bits = _draws(kind, gen, queue, size, dtype_key)  # whole vectors, as box_muller needs
            got = _scalars(gen.normal(queue, (size,), dtype, mu=mu, sigma=sigma), dtype_key)
            n = got.size
            cands, (rtol, atol) = _expected_normal(dtype_key, bits, mu, sigma)
            for cand in cands:
                want = mu + sigma * cand[:n]
                if np.allclose(got, want, rtol=rtol, atol=atol * sigma):
                    break
            else:
                np.testing.assert_allclose(got, mu + sigma * cands[0][:n], rtol=rtol, atol=atol * sigma)


@pytest.mark.parametrize("kind", list(GENERATORS))
def test_uniform_and_normal_statistics(ctx, queue, kind):
    n = 1 << 20
    gen = GENERATORS[kind](ctx, seed=2024)
    u = gen.uniform(queue, (n,), np.float32).get().astype(np.float64)
    assert abs(u.mean() - 0.5) < 5 * np.sqrt(1 / 12 / n)
    assert abs(u.var() - 1 / 12) < 0.01 / 12
    counts, _ = np.histogram(u, bins=32, range=(0, 1))
    chi2 = ((counts - n / 32) ** 2 / (n / 32)).sum()
    assert chi2 < 80, chi2  # 31 degrees of freedom: p < 1e-7 beyond 80
    z = gen.normal(queue, (n,), np.float32, mu=0, sigma=1).get().astype(np.float64)
    assert abs(z.mean()) < 5 / np.sqrt(n)
    assert abs(z.std() - 1) < 0.005
    assert abs(np.mean(np.abs(z) < 1) - 0.682689) < 0.003
    assert abs(np.mean(np.abs(z) < 2) - 0.954500) < 0.002
    i = gen.uniform(queue, (n,), np.int32, a=200, b=300).get()
    assert i.min() == 200 and i.max() == 299
    counts = np.bincount(i - 200, minlength=100)
    chi2 = ((counts - n / 100) ** 2 / (n / 100)).sum()
    assert chi2 < 180, chi2  # 99 degrees of freedom


@pytest.mark.parametrize("kind", list(GENERATORS))
def test_seeds_and_counters(ctx, queue, kind):
    cls = GENERATORS[kind]
    first = cls(ctx, seed=7).uniform(queue, (1000,), np.float32).get()
    again = cls(ctx, seed=7).uniform(queue, (1000,), np.float32).get()
    other = cls(ctx, seed=8).uniform(queue, (1000,), np.float32).get()
    np.testing.assert_array_equal(first, again)
    assert (first != other).mean() > 0.99
    # successive fills advance the counter: a new stream, as the reference says
    gen = cls(ctx, seed=7)
    gen.uniform(queue, (1000,), np.float32)
    bits = _draws(kind, gen, queue, 1000, "float32")[:, :1000]
    second = gen.uniform(queue, (1000,), np.float32).get()
    assert (second != first).mean() > 0.99
    _one_of(second, _expected_uniform("float32", bits, 0, 1), "second fill")
    # explicit key and counter, including a counter word about to wrap (the carry
    # into the next word is the kernel's ++ctr)
    key = [-1] * (len(gen.key))
    gen = cls(ctx, key=key, counter=[-1, -1, 5, -7])
    bits = _draws(kind, gen, queue, 4099, "int32")[:, :4099]
    got = gen.uniform(queue, (4099,), np.int32, a=0, b=2**31 - 1).get()
    _one_of(got, _expected_uniform("int32", bits, 0, 2**31 - 1), "explicit key/counter")


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_rand_and_fill_rand(queue, device, dtype):
    if dtype == np.float64:
        require(has_fp64(device), "cl_khr_fp64")
    a, b = (3, 11) if np.dtype(dtype).kind == "i" else (-2.5, 0.5)
    for shape in [(1,), (17, 5), (4, 3, 1001), (0,)]:
        ary = clrandom.rand(queue, shape, dtype, a=a, b=b)
        assert ary.shape == shape and ary.dtype == dtype
        host = ary.get()
        assert ((host >= a) & (host <= b)).all()
        if host.size > 1000:
            assert len(np.unique(host)) > (7 if np.dtype(dtype).kind == "i" else host.size // 2)
    ary = cla.zeros(queue, (12345,), dtype)
    clrandom.fill_rand(ary, a=a, b=b)
    host = ary.get()
    assert ((host >= a) & (host <= b)).all()
    assert (host != 0).mean() > 0.5


# {{{ Philox rounds against a plain host implementation, ranges, moments

M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK = 0xFFFFFFFF


def philox4x32_host(ctr, key, rounds=10):
    """Philox4x32 (Salmon et al., SC'11), the reference for the kernel."""
    c = list(ctr)
    k = list(key)
    for r in range(rounds):
        if r:
            k = [(k[0] + W0) & MASK, (k[1] + W1) & MASK]
        p0 = M0 * c[0]
        p1 = M1 * c[2]
        c = [
            (p1 >> 32) ^ c[1] ^ k[0],
            p1 & MASK,
            (p0 >> 32) ^ c[3] ^ k[1],
            p0 & MASK,
        ]
    return c


KERNEL = """
#include <pyopencl-random123/philox.cl>
kernel void philox(global const uint4* ctr, global const uint2* key, global uint4* out)
{
    size_t i = get_global_id(0);
    philox4x32_ctr_t c = {{ctr[i].x, ctr[i].y, ctr[i].z, ctr[i].w}};
    philox4x32_key_t k = {{key[i].x, key[i].y}};
    philox4x32_ctr_t r = philox4x32(c, k);
    out[i] = (uint4)(r.v[0], r.v[1], r.v[2], r.v[3]);
}
"""


def test_philox_rounds_match_host(ctx, queue):
    import os
    import pyopencl

    include = os.path.join(os.path.dirname(pyopencl.__file__), "cl")
    prg = cl.Program(ctx, KERNEL).build(options=["-I", include])
    rng = np.random.default_rng(11)
    n = 257
    ctr = rng.integers(0, 2**32, (n, 4), dtype=np.uint64).astype(np.uint32)
    key = rng.integers(0, 2**32, (n, 2), dtype=np.uint64).astype(np.uint32)
    ctr[0] = 0
    key[0] = 0
    ctr[1] = MASK
    key[1] = MASK
    d_ctr = cla.to_device(queue, ctr)
    d_key = cla.to_device(queue, key)
    out = cla.empty(queue, (n, 4), np.uint32)
    prg.philox(queue, (n,), None, d_ctr.data, d_key.data, out.data)
    got = out.get()
    for i in range(n):
        want = philox4x32_host([int(x) for x in ctr[i]], [int(x) for x in key[i]])
        assert [int(x) for x in got[i]] == want, f"item {i}"


@pytest.mark.parametrize("generator", [clrandom.PhiloxGenerator, clrandom.ThreefryGenerator])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
def test_uniform_range_and_determinism(ctx, queue, generator, dtype):
    a = generator(ctx, seed=1234).uniform(queue, (100_000,), dtype, a=0, b=100).get()
    b = generator(ctx, seed=1234).uniform(queue, (100_000,), dtype, a=0, b=100).get()
    np.testing.assert_array_equal(a, b)
    assert a.min() >= 0 and a.max() < 100
    assert abs(float(a.mean()) - (49.5 if np.issubdtype(dtype, np.integer) else 50.0)) < 1.0
    c = generator(ctx, seed=4321).uniform(queue, (100_000,), dtype, a=0, b=100).get()
    assert (a != c).mean() > 0.9


@pytest.mark.parametrize("generator", [clrandom.PhiloxGenerator, clrandom.ThreefryGenerator])
def test_normal_moments(ctx, queue, generator):
    x = generator(ctx, seed=5).normal(queue, (400_000,), np.float32, mu=3, sigma=2).get()
    assert abs(float(x.mean()) - 3) < 0.02
    assert abs(float(x.std()) - 2) < 0.02


def test_rand(queue):
    x = clrandom.rand(queue, (10_000,), np.float32).get()
    assert x.min() >= 0 and x.max() < 1
    assert abs(float(x.mean()) - 0.5) < 0.02

# }}}
