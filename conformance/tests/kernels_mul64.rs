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
