//! Comparisons of `long`/`ulong` lanes, which the jit makes in vector registers
//! (unsigned ones with flipped sign bits, `<=`/`>=` as complements): every ordered
//! comparison, signed and unsigned, of varying, uniform and affine operands around
//! the sign boundary and the ends of the range, against host references, in partial
//! sub-groups too.

use cranecl_conformance::*;

#[test]
fn ordered_comparisons_of_long_lanes() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global const ulong *a, global const ulong *b, global uint *o)
{
    size_t i = get_global_id(0);
    ulong x = a[i], y = b[i], u = a[0];
    long sx = (long)x, sy = (long)y, su = (long)u;
    ulong g = (ulong)i * 0x0400000000000000UL;    /* affine, wraps past 2^64 */
    uint r = 0;
    r |= (uint)(x < y) << 0;
    r |= (uint)(x > y) << 1;
    r |= (uint)(x <= y) << 2;
    r |= (uint)(x >= y) << 3;
    r |= (uint)(sx < sy) << 4;
    r |= (uint)(sx > sy) << 5;
    r |= (uint)(sx <= sy) << 6;
    r |= (uint)(sx >= sy) << 7;
    r |= (uint)(x < u) << 8;
    r |= (uint)(u <= x) << 9;
    r |= (uint)(sx >= su) << 10;
    r |= (uint)(su >= sx) << 11;
    r |= (uint)(g < x) << 12;
    r |= (uint)(g >= y) << 13;
    r |= (uint)((long)g <= sx) << 14;
    r |= (uint)(x == y) << 15;
    o[i] = r;
}
"#;
    let n = 203;
    let edge = [
        0u64,
        1,
        0x7fff_ffff_ffff_ffff,
        0x8000_0000_0000_0000,
        0x8000_0000_0000_0001,
        u64::MAX,
        u64::MAX - 1,
        0xffff_ffff,
        0x1_0000_0000,
    ];
    let mut rng = TestRng::new(977);
    let pick = |r: &mut TestRng| {
        if r.next_u32().is_multiple_of(2) {
            edge[r.next_u32() as usize % edge.len()]
        } else {
            (u64::from(r.next_u32()) << 32) | u64::from(r.next_u32())
        }
    };
    let a: Vec<u64> = (0..n).map(|_| pick(&mut rng)).collect();
    let b: Vec<u64> = (0..n)
        .map(|i: usize| {
            if i.is_multiple_of(5) {
                a[i]
            } else {
                pick(&mut rng)
            }
        })
        .collect();
    let ab = ctx.buffer_from(&a);
    let bb = ctx.buffer_from(&b);
    let ob = ctx.buffer_zeroed::<u32>(n);
    run_with_buffers(&ctx, src, "", "k", &[&ab, &bb, &ob], &[n], Some(&[7]));
    let o = ctx.read::<u32>(&ob, n);
    let u = a[0];
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let (sx, sy, su) = (x as i64, y as i64, u as i64);
        let g = (i as u64).wrapping_mul(0x0400_0000_0000_0000);
        let bits = [
            x < y,
            x > y,
            x <= y,
            x >= y,
            sx < sy,
            sx > sy,
            sx <= sy,
            sx >= sy,
            x < u,
            u <= x,
            sx >= su,
            su >= sx,
            g < x,
            g >= y,
            (g as i64) <= sx,
            x == y,
        ];
        let want = bits
            .iter()
            .enumerate()
            .fold(0u32, |r, (k, &bit)| r | (u32::from(bit) << k));
        assert_eq!(o[i], want, "comparisons of item {i}: {x:#x} {y:#x} (bits)");
    }
}
