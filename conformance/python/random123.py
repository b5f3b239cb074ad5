"""Host references for pyopencl.clrandom: the Random123 Philox4x32-10 and
Threefry4x32-20 bijections in numpy, and the exact output layout of pyopencl's
generator kernel (`Random123GeneratorBase.get_gen_kernel`), so tests can compare a
device's random numbers bit for bit."""

import numpy as np

MASK32 = np.uint64(0xFFFF_FFFF)


def _u32(values):
    return np.asarray(values, dtype=np.int64).astype(np.uint64) & MASK32


def philox4x32(ctr, key):
    """Philox4x32-10: `ctr` is (4, n) and `key` (2, n), uint64 arrays of 32-bit words."""
    m0, m1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    w0, w1 = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
    c0, c1, c2, c3 = (c.copy() for c in ctr)
    k0, k1 = (k.copy() for k in key)
    for rnd in range(10):
        if rnd:
            k0 = (k0 + w0) & MASK32
            k1 = (k1 + w1) & MASK32
        p0 = m0 * c0
        p1 = m1 * c2
        hi0, lo0 = p0 >> np.uint64(32), p0 & MASK32
        hi1, lo1 = p1 >> np.uint64(32), p1 & MASK32
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return np.stack([c0, c1, c2, c3])


_THREEFRY_ROT = [(10, 26), (11, 21), (13, 27), (23, 5), (6, 20), (17, 11), (25, 10), (18, 20)]


def _rotl(x, r):
    return ((x << np.uint64(r)) | (x >> np.uint64(32 - r))) & MASK32


def threefry4x32(ctr, key):
    """Threefry4x32-20: `ctr` and `key` are (4, n) uint64 arrays of 32-bit words."""
    ks = [k.copy() for k in key]
    parity = np.uint64(0x1BD11BDA)
    for k in key:
        parity = parity ^ k
    ks.append(parity)
    x = [(c + k) & MASK32 for c, k in zip(ctr, ks)]
    for rnd in range(20):
        ra, rb = _THREEFRY_ROT[rnd % 8]
        if rnd % 2 == 0:
            x[0] = (x[0] + x[1]) & MASK32
            x[1] = _rotl(x[1], ra) ^ x[0]
            x[2] = (x[2] + x[3]) & MASK32
            x[3] = _rotl(x[3], rb) ^ x[2]
        else:
            x[0] = (x[0] + x[3]) & MASK32
            x[3] = _rotl(x[3], ra) ^ x[0]
            x[2] = (x[2] + x[1]) & MASK32
            x[1] = _rotl(x[1], rb) ^ x[2]
        if rnd % 4 == 3:
            inject = rnd // 4 + 1
            for j in range(4):
                x[j] = (x[j] + ks[(inject + j) % 5]) & MASK32
            x[3] = (x[3] + np.uint64(inject)) & MASK32
    return np.stack(x)


def generator_bits(kind, key, counter, global_size, n_vec, calls_per_vec):
    """The uint32 words pyopencl's kernel draws, shaped (calls_per_vec, n_vec * 4):
    output vector b (4 consecutive scalars) is made by work-item b % global_size on
    its (b // global_size)-th pass, from calls_per_vec consecutive draws. Work-item g
    uses key (g, key...) and the counter (c0 + draw, c1, c2, c3) carried over 96 bits.
    """
    block = np.arange(n_vec, dtype=np.uint64)
    gid = block % np.uint64(global_size)
    pass_no = block // np.uint64(global_size)
    c = [int(v) & 0xFFFF_FFFF for v in counter]
    low96 = c[0] + (c[1] << 32) + (c[2] << 64)
    out = []
    for call in range(calls_per_vec):
        draw = pass_no * np.uint64(calls_per_vec) + np.uint64(call)
        # the 96-bit counter add, in three 32-bit limbs
        s0 = np.uint64(low96 & 0xFFFF_FFFF) + draw
        v0 = s0 & MASK32
        s1 = np.uint64((low96 >> 32) & 0xFFFF_FFFF) + (s0 >> np.uint64(32))
        v1 = s1 & MASK32
        v2 = (np.uint64(low96 >> 64) + (s1 >> np.uint64(32))) & MASK32
        v3 = np.full_like(v0, np.uint64(c[3]))
        ctr = np.stack([v0, v1, v2, v3])
        keys = [gid] + [np.full_like(gid, k) for k in _u32(key)]
        if kind == "philox":
            bits = philox4x32(ctr, np.stack(keys))
        else:
            bits = threefry4x32(ctr, np.stack(keys))
        out.append(bits.T.reshape(-1))
    return np.stack(out)
