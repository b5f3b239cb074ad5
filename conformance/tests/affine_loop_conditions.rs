//! Loops whose exit test compares a value that steps by one per work-item (an
//! affine value) with a bound: cranecl decides "every work-item of the sub-group
//! stays" or "every one leaves" from the first and last work-item alone when their
//! values do not wrap around, and takes the lane-by-lane path otherwise. Checked
//! against the host: unsigned counters that wrap inside a sub-group, signed
//! counters counting down across zero and across the signed range's end, and the
//! bound on either side of the comparison.

use cranecl_conformance::*;

const SRC: &str = r#"
kernel void up_u(global const uint *in, global uint *out, uint base, uint n, uint step) {
    uint g = get_global_id(0);
    uint c = 0, s = 0;
    for (uint i = base + g; i < n; i += step) {
        c++;
        s += in[i % 64u] ^ i;
    }
    out[2 * g] = c;
    out[2 * g + 1] = s;
}
kernel void down_s(global const uint *in, global int *out, int base, int lo, int step) {
    uint g = get_global_id(0);
    int c = 0, s = 0;
    for (int i = (int)((uint)base - g); i > lo; i -= step) {
        c++;
        s += (int)in[(uint)i % 64u] + i;
    }
    out[2 * g] = c;
    out[2 * g + 1] = s;
}
kernel void bound_left(global const uint *in, global uint *out, uint base, uint n, uint step) {
    uint g = get_global_id(0);
    uint c = 0, s = 0;
    uint i = base + g;
    do {
        c++;
        s += in[i % 64u];
        i += step;
    } while (n >= i);
    out[2 * g] = c;
    out[2 * g + 1] = s;
}
"#;

fn host_up(input: &[u32], items: usize, base: u32, n: u32, step: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for g in 0..items as u32 {
        let (mut c, mut s) = (0u32, 0u32);
        let mut i = base.wrapping_add(g);
        while i < n {
            c += 1;
            s = s.wrapping_add(input[(i % 64) as usize] ^ i);
            i = i.wrapping_add(step);
        }
        out.extend([c, s]);
    }
    out
}

fn host_down(input: &[u32], items: usize, base: i32, lo: i32, step: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for g in 0..items as u32 {
        let (mut c, mut s) = (0i32, 0i32);
        let mut i = (base as u32).wrapping_sub(g) as i32;
        while i > lo {
            c += 1;
            s = s
                .wrapping_add(input[(i as u32 % 64) as usize] as i32)
                .wrapping_add(i);
            i -= step;
        }
        out.extend([c, s]);
    }
    out
}

fn host_bound_left(input: &[u32], items: usize, base: u32, n: u32, step: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for g in 0..items as u32 {
        let (mut c, mut s) = (0u32, 0u32);
        let mut i = base.wrapping_add(g);
        loop {
            c += 1;
            s = s.wrapping_add(input[(i % 64) as usize]);
            i = i.wrapping_add(step);
            if n < i {
                break;
            }
        }
        out.extend([c, s]);
    }
    out
}

/// Runs `kernel` over 256 work-items in groups of 64 with the scalar arguments
/// `(a, b, step)` and compares its (count, sum) pairs with the host's.
fn check<T: Pod + PartialEq + std::fmt::Debug>(
    ctx: &DeviceContext,
    k: &Kernel,
    inb: &Buffer,
    (a, b, step): (T, T, T),
    expected: Vec<T>,
    label: &str,
) {
    let items = expected.len() / 2;
    let out = ctx.buffer_zeroed::<T>(2 * items);
    k.arg_buffer(0, inb)
        .arg_buffer(1, &out)
        .arg(2, a)
        .arg(3, b)
        .arg(4, step);
    ctx.run(k, &[items], Some(&[64]));
    assert_eq!(ctx.read::<T>(&out, 2 * items), expected, "{label}");
}

#[test]
fn affine_loop_conditions_agree_with_the_host_whether_lanes_wrap_or_not() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SRC, "-cl-std=CL3.0");
    let items = 256usize;
    let input: Vec<u32> = (0..64u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let inb = ctx.buffer_from(&input);

    let k = program.kernel("up_u");
    // (base, n, step): no wrap; ragged last iteration; lanes wrapping past 2^32 in
    // the middle of a sub-group (those before the wrap never enter the loop).
    for (base, n, step) in [
        (0u32, 5000u32, 256u32),
        (3, 4099, 256),
        (0xffff_fffa, 700, 37),
        (0xffff_ff80, 300, 97),
        (10, 10, 1),
    ] {
        let expected = host_up(&input, items, base, n, step);
        let label = format!("up_u base {base:#x} n {n} step {step}");
        check(&ctx, &k, &inb, (base, n, step), expected, &label);
    }

    let k = program.kernel("down_s");
    // Counting down across zero, and from values that wrap from i32::MIN to
    // i32::MAX inside a sub-group.
    for (base, lo, step) in [
        (3000i32, -2000i32, 211i32),
        (100, 50, 7),
        (i32::MIN + 3, -5, 1 << 24),
        (-40, -100, 3),
    ] {
        let expected = host_down(&input, items, base, lo, step);
        let label = format!("down_s base {base} lo {lo} step {step}");
        check(&ctx, &k, &inb, (base, lo, step), expected, &label);
    }

    let k = program.kernel("bound_left");
    for (base, n, step) in [
        (0u32, 3000u32, 64u32),
        (7, 1000, 300),
        (0xffff_fff0, 90, 50),
    ] {
        let expected = host_bound_left(&input, items, base, n, step);
        let label = format!("bound_left base {base:#x} n {n} step {step}");
        check(&ctx, &k, &inb, (base, n, step), expected, &label);
    }
}
