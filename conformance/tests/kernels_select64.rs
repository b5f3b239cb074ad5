//! 64-bit values (long, ulong, double, pointers) chosen per work-item under a
//! divergent condition: the jit selects them with the lane mask widened to 64 bits,
//! in `?:` and at the join of a divergent if/else, compared with host references.

use cranecl_conformance::*;

#[test]
fn divergent_selects_of_64_bit_values() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global const int *in, global long *ol, global double *od,
              global const long *tab, global long *op)
{
    size_t i = get_global_id(0);
    int x = in[i];
    long a = (long)x * 0x100000001L - 7;
    ulong b = (ulong)(x + 3) << 33;
    long s = (x % 3 == 0) ? a : (long)b;
    double d = (x & 2) ? (double)x * 1.5 : -(double)x / 4.0;
    global const long *p = (x & 4) ? tab + 1 : tab;
    if (x % 5 == 1) {
        s = s ^ 0x5555L;
        d = d + 0.25;
    } else if (x % 5 == 2) {
        s = -s;
    }
    ol[i] = s;
    od[i] = d;
    op[i] = p[x & 1];
}
"#;
    let n = 203;
    let mut rng = TestRng::new(64);
    let input: Vec<i32> = rng.vec(n, |r| (r.next_u32() % 100_000) as i32);
    let tab: Vec<i64> = vec![11, -22, 33];
    let inb = ctx.buffer_from(&input);
    let ol = ctx.buffer_zeroed::<i64>(n);
    let od = ctx.buffer_zeroed::<f64>(n);
    let tb = ctx.buffer_from(&tab);
    let op = ctx.buffer_zeroed::<i64>(n);
    // Local size 7: partial sub-groups as well as full ones.
    run_with_buffers(
        &ctx,
        src,
        "",
        "k",
        &[&inb, &ol, &od, &tb, &op],
        &[n],
        Some(&[7]),
    );
    let got_l = ctx.read::<i64>(&ol, n);
    let got_d = ctx.read::<f64>(&od, n);
    let got_p = ctx.read::<i64>(&op, n);
    for (i, &x) in input.iter().enumerate() {
        let a = (x as i64).wrapping_mul(0x1_0000_0001) - 7;
        let b = ((x + 3) as u64) << 33;
        let mut s = if x % 3 == 0 { a } else { b as i64 };
        let mut d = if x & 2 != 0 {
            x as f64 * 1.5
        } else {
            -(x as f64) / 4.0
        };
        if x % 5 == 1 {
            s ^= 0x5555;
            d += 0.25;
        } else if x % 5 == 2 {
            s = -s;
        }
        let base = if x & 4 != 0 { 1 } else { 0 };
        assert_eq!(got_l[i], s, "long, x = {x}");
        assert_eq!(got_d[i], d, "double, x = {x}");
        assert_eq!(got_p[i], tab[base + (x & 1) as usize], "pointer, x = {x}");
    }
}
