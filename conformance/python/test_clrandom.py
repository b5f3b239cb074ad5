"""pyopencl.clrandom on the driver: the Random123 Philox rounds (clang emits
OpUMulExtended / OpIAddCarry for them) against a host implementation, and the
generators' output ranges, determinism and moments."""

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.clrandom as clrandom
import pytest

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
