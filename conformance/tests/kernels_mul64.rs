//! 64-bit products of zero-extended 32-bit lanes (`(ulong)a * b` with `uint` a, b: the
//! Philox `mulhilo32` of Random123, `mul_hi` of `uint`), which the jit lowers to a
//! widening 32x32 multiply, next to general 64-bit products, the truncations of
//! 64-bit lanes to 32 bits and `mul_hi`/`mad_hi` of `int`/`uint` lanes (inline, the
//! same multiply); compared with host references.

use cranecl_conformance::*;

#[test]
fn products_of_zero_extended_32_bit_lanes() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global const uint *a, global const uint *b, global const ulong *w,
              global ulong *o, global uint *t)
{
    size_t i = get_global_id(0);
    uint x = a[i], y = b[i];
    ulong big = w[i];
    ulong p0 = (ulong)x * (ulong)y;               /* both widened */
    ulong p1 = (ulong)x * 0xD2511F53u;            /* widened times a constant */
    ulong p2 = (big & 0xffffffffUL) * (ulong)y;   /* masked times widened */
    ulong p3 = (big >> 32) * (big & 0xffffffffUL);/* shifted times masked */
    ulong p4 = big * (ulong)x;                    /* general 64-bit product */
    ulong p5 = big * 0x1234567890abcdefUL;        /* general times a big constant */
    /* Philox's key words packed in one ulong: xor/or of a shifted and a masked
       value still has a zero upper half */
    ulong p6 = ((big >> 32) ^ (p4 & 0xffffffffUL)) * 0xCD9E8D57UL;
    ulong p7 = ((big >> 40) | (ulong)y) * (big & 0xffffffffUL);
    /* ... but not when one side has upper bits */
    ulong p8 = ((big >> 32) ^ p5) * 0xCD9E8D57UL;
    o[9 * i + 6] = p6;
    o[9 * i + 7] = p7;
    o[9 * i + 8] = p8;
    o[9 * i + 0] = p0;
    o[9 * i + 1] = p1;
    o[9 * i + 2] = p2;
    o[9 * i + 3] = p3;
    o[9 * i + 4] = p4;
    o[9 * i + 5] = p5;
    /* Philox-style round: high and low halves as uint (truncations of ulong lanes) */
    t[7 * i + 0] = (uint)(p1 >> 32) ^ y ^ (uint)big;
    t[7 * i + 1] = (uint)p1;
    t[7 * i + 2] = mul_hi(x, y);
    t[7 * i + 3] = (uint)mul_hi((int)x, (int)y);
    t[7 * i + 4] = mad_hi(x, 0x9E3779B9u, y);
    t[7 * i + 5] = (uint)mad_hi((int)a[0], (int)b[0], (int)x);  /* uniform product */
    t[7 * i + 6] = (uint)mul_hi((int)x, -7);
}
"#;
    let n = 203;
    let mut rng = TestRng::new(6432);
    let a: Vec<u32> = rng.vec(n, |r| r.next_u32());
    let b: Vec<u32> = rng.vec(n, |r| r.next_u32());
    let w: Vec<u64> = rng.vec(n, |r| {
        (u64::from(r.next_u32()) << 32) | u64::from(r.next_u32())
    });
    let ab = ctx.buffer_from(&a);
    let bb = ctx.buffer_from(&b);
    let wb = ctx.buffer_from(&w);
    let ob = ctx.buffer_zeroed::<u64>(9 * n);
    let tb = ctx.buffer_zeroed::<u32>(7 * n);
    // Local size 7: partial sub-groups as well as full ones.
    run_with_buffers(
        &ctx,
        src,
        "",
        "k",
        &[&ab, &bb, &wb, &ob, &tb],
        &[n],
        Some(&[7]),
    );
    let o = ctx.read::<u64>(&ob, 9 * n);
    let t = ctx.read::<u32>(&tb, 7 * n);
    for i in 0..n {
        let (x, y, big) = (u64::from(a[i]), u64::from(b[i]), w[i]);
        let p1 = x * 0xD251_1F53;
        let want = [
            x * y,
            p1,
            (big & 0xffff_ffff) * y,
            (big >> 32) * (big & 0xffff_ffff),
            big.wrapping_mul(x),
            big.wrapping_mul(0x1234_5678_90ab_cdef),
            ((big >> 32) ^ (big.wrapping_mul(x) & 0xffff_ffff)) * 0xCD9E_8D57,
            ((big >> 40) | y) * (big & 0xffff_ffff),
            ((big >> 32) ^ big.wrapping_mul(0x1234_5678_90ab_cdef)).wrapping_mul(0xCD9E_8D57),
        ];
        assert_eq!(&o[9 * i..9 * i + 9], &want, "products of item {i}");
        let shi = |p: i32, q: i32| ((i64::from(p) * i64::from(q)) >> 32) as i32;
        let want_t = [
            (p1 >> 32) as u32 ^ b[i] ^ big as u32,
            p1 as u32,
            ((x * y) >> 32) as u32,
            shi(a[i] as i32, b[i] as i32) as u32,
            (((x * 0x9E37_79B9) >> 32) as u32).wrapping_add(b[i]),
            shi(a[0] as i32, b[0] as i32).wrapping_add(a[i] as i32) as u32,
            shi(a[i] as i32, -7) as u32,
        ];
        assert_eq!(&t[7 * i..7 * i + 7], &want_t, "high words of item {i}");
    }
}

/// Philox4x32-10 as Random123 writes it (`mulhilo32` through a `ulong` product, the
/// key in a struct of two `uint`s that clang packs into one `ulong`), on the host.
fn philox4x32_10(mut c: [u32; 4], mut k: [u32; 2]) -> [u32; 4] {
    for _ in 0..10 {
        let p0 = u64::from(c[0]) * 0xD251_1F53;
        let p1 = u64::from(c[2]) * 0xCD9E_8D57;
        let (hi0, lo0) = ((p0 >> 32) as u32, p0 as u32);
        let (hi1, lo1) = ((p1 >> 32) as u32, p1 as u32);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
        k = [
            k[0].wrapping_add(0x9E37_79B9),
            k[1].wrapping_add(0xBB67_AE85),
        ];
    }
    c
}

/// `long` arithmetic read only through truncations and `>> 32`, which the jit also
/// computes on the 32-bit halves of four lanes (`lower/split64.rs`): products of
/// zero-extended lanes, xor/or/and with values whose upper halves are not zero, adds
/// whose low words carry (with constants, uniforms, products and affine ids),
/// shifts by 32..63, and the whole Philox generator; edge values 0, 1, 2^31,
/// 2^32 - 1 next to random ones, in partial sub-groups too.
#[test]
fn long_lanes_read_as_32_bit_halves() {
    let ctx = DeviceContext::new();
    let src = r#"
typedef struct { uint v[4]; } ctr_t;
typedef struct { uint v[2]; } key_t;

uint mulhilo(uint a, uint b, uint *hip)
{
    ulong p = ((ulong)a) * ((ulong)b);
    *hip = p >> 32;
    return (uint)p;
}

ctr_t round(ctr_t c, key_t k)
{
    uint hi0, hi1;
    uint lo0 = mulhilo(0xD2511F53u, c.v[0], &hi0);
    uint lo1 = mulhilo(0xCD9E8D57u, c.v[2], &hi1);
    ctr_t r = {{hi1 ^ c.v[1] ^ k.v[0], lo1, hi0 ^ c.v[3] ^ k.v[1], lo0}};
    return r;
}

key_t bump(key_t k)
{
    k.v[0] += 0x9E3779B9u;
    k.v[1] += 0xBB67AE85u;
    return k;
}

ctr_t philox(ctr_t c, key_t k)
{
    c = round(c, k); k = bump(k); c = round(c, k); k = bump(k);
    c = round(c, k); k = bump(k); c = round(c, k); k = bump(k);
    c = round(c, k); k = bump(k); c = round(c, k); k = bump(k);
    c = round(c, k); k = bump(k); c = round(c, k); k = bump(k);
    c = round(c, k); k = bump(k); c = round(c, k);
    return c;
}

kernel void k(global const uint *a, global const uint *b, global const ulong *w,
              global uint *t, global uint4 *ph)
{
    size_t i = get_global_id(0);
    uint x = a[i], y = b[i];
    ulong big = w[i];
    ulong u = w[0];                               /* uniform, not a constant */
    ulong p = (ulong)x * (ulong)y;
    ulong q = (ulong)y * 0xCD9E8D57UL;
    ulong s = (p ^ big) + q;                      /* carries out of the low words */
    ulong m = ((p >> 32) ^ (big & 0xffffffffUL)) * 0xD2511F53UL;
    ulong g = (ulong)i | ((ulong)x << 32);        /* affine id packed with a word */
    t[12 * i + 0] = (uint)p;
    t[12 * i + 1] = (uint)(p >> 32);
    t[12 * i + 2] = (uint)(s >> 32);
    t[12 * i + 3] = (uint)s;
    t[12 * i + 4] = (uint)((p + u) >> 32);
    t[12 * i + 5] = (uint)((q + 0x76CF5D0A00000000UL) >> 32);
    t[12 * i + 6] = (uint)((big + 0xFFFFFFFFUL) >> 32);
    t[12 * i + 7] = (uint)((p | big) >> 40) ^ (uint)((q & big) >> 63);
    t[12 * i + 8] = (uint)(m >> 32) ^ (uint)m;
    t[12 * i + 9] = (uint)(((g + 0x9E3779B9UL) ^ q) >> 32);
    t[12 * i + 10] = (uint)((g + 0x9E3779B9UL) ^ q);
    t[12 * i + 11] = (uint)(((p >> 33) * (ulong)y) >> 32);
    ctr_t c = {{x, y, (uint)big, (uint)(big >> 32)}};
    key_t k = {{(uint)i, (uint)u}};
    ctr_t r = philox(c, k);
    ph[i] = (uint4)(r.v[0], r.v[1], r.v[2], r.v[3]);
}
"#;
    let n = 203;
    let mut rng = TestRng::new(3210);
    let edge = [0u32, 1, 0x8000_0000, u32::MAX];
    let word = |r: &mut TestRng, i: usize| {
        if i.is_multiple_of(3) {
            edge[(i / 3 + r.next_u32() as usize) % 4]
        } else {
            r.next_u32()
        }
    };
    let a: Vec<u32> = (0..n).map(|i| word(&mut rng, i)).collect();
    let b: Vec<u32> = (0..n).map(|i| word(&mut rng, i + 1)).collect();
    let w: Vec<u64> = (0..n)
        .map(|i| (u64::from(word(&mut rng, i + 2)) << 32) | u64::from(word(&mut rng, i)))
        .collect();
    let ab = ctx.buffer_from(&a);
    let bb = ctx.buffer_from(&b);
    let wb = ctx.buffer_from(&w);
    let tb = ctx.buffer_zeroed::<u32>(12 * n);
    let pb = ctx.buffer_zeroed::<u32>(4 * n);
    // Local size 7: partial sub-groups as well as full ones.
    run_with_buffers(
        &ctx,
        src,
        "",
        "k",
        &[&ab, &bb, &wb, &tb, &pb],
        &[n],
        Some(&[7]),
    );
    let t = ctx.read::<u32>(&tb, 12 * n);
    let ph = ctx.read::<u32>(&pb, 4 * n);
    let u = w[0];
    for i in 0..n {
        let (x, y, big) = (u64::from(a[i]), u64::from(b[i]), w[i]);
        let p = x * y;
        let q = y * 0xCD9E_8D57;
        let s = (p ^ big).wrapping_add(q);
        let m = ((p >> 32) ^ (big & 0xffff_ffff)) * 0xD251_1F53;
        let g = i as u64 | (x << 32);
        let g2 = g.wrapping_add(0x9E37_79B9) ^ q;
        let want = [
            p as u32,
            (p >> 32) as u32,
            (s >> 32) as u32,
            s as u32,
            (p.wrapping_add(u) >> 32) as u32,
            (q.wrapping_add(0x76CF_5D0A_0000_0000) >> 32) as u32,
            (big.wrapping_add(0xFFFF_FFFF) >> 32) as u32,
            ((p | big) >> 40) as u32 ^ ((q & big) >> 63) as u32,
            (m >> 32) as u32 ^ m as u32,
            (g2 >> 32) as u32,
            g2 as u32,
            (((p >> 33) * y) >> 32) as u32,
        ];
        assert_eq!(&t[12 * i..12 * i + 12], &want, "halves of item {i}");
        let c = [a[i], b[i], w[i] as u32, (w[i] >> 32) as u32];
        let want_ph = philox4x32_10(c, [i as u32, u as u32]);
        assert_eq!(&ph[4 * i..4 * i + 4], &want_ph, "philox of item {i}");
    }
}
