//! Loops whose exit condition may differ between work-items but, at run time, mostly
//! does not: cranecl runs an iteration of a full sub-group in which every work-item
//! goes the same way without blending the loop's values lane by lane, and blends
//! only where they part. Checked against the host: a grid-stride sum whose last
//! iteration is ragged, and loops with live-out values whose limits come from memory
//! (all equal, or differing per work-item), exiting through the false edge
//! (`do ... while`) and through the true edge (`if (...) break`).

use cranecl_conformance::*;

const SRC: &str = r#"
kernel void grid_sum(global const float *in, global float *out, uint n) {
    uint gsz = get_global_size(0);
    float s = 0.0f;
    for (uint i = get_global_id(0); i < n; i += gsz)
        s += in[i];
    out[get_global_id(0)] = s;
}
kernel void do_while(global const int *lim, global const int *in, global int *out) {
    size_t g = get_global_id(0);
    int k = 0, acc = 0, last = 0;
    do {
        last = in[(g + (size_t)k) % 97];
        acc += last * (k + 1);
        k++;
    } while (k < lim[g]);
    out[3 * g] = acc;
    out[3 * g + 1] = k;
    out[3 * g + 2] = last;
}
kernel void breaks(global const int *lim, global const int *in, global int *out) {
    size_t g = get_global_id(0);
    int k = 0, acc = 1;
    while (1) {
        acc = acc * 3 + (in[(g * 7 + (size_t)k) % 97] & 63);
        if (acc > lim[g] || k >= 40)
            break;
        k++;
    }
    out[2 * g] = acc;
    out[2 * g + 1] = k;
}
"#;

fn host_do_while(lim: &[i32], input: &[i32]) -> Vec<i32> {
    let mut out = Vec::new();
    for (g, &l) in lim.iter().enumerate() {
        let (mut k, mut acc) = (0i32, 0i32);
        let last = loop {
            let last = input[(g + k as usize) % 97];
            acc = acc.wrapping_add(last.wrapping_mul(k + 1));
            k += 1;
            if k >= l {
                break last;
            }
        };
        out.extend([acc, k, last]);
    }
    out
}

fn host_breaks(lim: &[i32], input: &[i32]) -> Vec<i32> {
    let mut out = Vec::new();
    for (g, &l) in lim.iter().enumerate() {
        let (mut k, mut acc) = (0i32, 1i32);
        loop {
            acc = acc * 3 + (input[(g * 7 + k as usize) % 97] & 63);
            if acc > l || k >= 40 {
                break;
            }
            k += 1;
        }
        out.extend([acc, k]);
    }
    out
}

#[test]
fn grid_stride_sums_with_a_ragged_last_iteration() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SRC, "-cl-std=CL3.0");
    let k = program.kernel("grid_sum");
    let items = 256usize;
    for n in [items * 16, items * 16 - 3, items * 5 + 7, 100, 0] {
        let input: Vec<f32> = (0..n.max(1)).map(|i| (i % 13) as f32 - 6.0).collect();
        let inb = ctx.buffer_from(&input);
        let out = ctx.buffer_zeroed::<f32>(items);
        k.arg_buffer(0, &inb).arg_buffer(1, &out).arg(2, n as u32);
        ctx.run(&k, &[items], Some(&[64]));
        let expect: Vec<f32> = (0..items)
            .map(|g| (g..n).step_by(items).map(|i| input[i]).sum())
            .collect();
        assert_eq!(ctx.read::<f32>(&out, items), expect, "n = {n}");
    }
}

#[test]
fn loops_with_live_outs_exit_right_whether_work_items_agree_or_not() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SRC, "-cl-std=CL3.0");
    let items = 96usize;
    let input: Vec<i32> = (0..97).map(|i| (i * 37 % 101) - 50).collect();
    let inb = ctx.buffer_from(&input);
    let limits: [(&str, Vec<i32>); 3] = [
        ("equal", vec![9; items]),
        ("per item", (0..items as i32).map(|g| 1 + g % 11).collect()),
        (
            "one differs",
            (0..items as i32)
                .map(|g| if g == 37 { 20 } else { 6 })
                .collect(),
        ),
    ];
    for (what, lim) in &limits {
        let limb = ctx.buffer_from(lim);
        let k = program.kernel("do_while");
        let out = ctx.buffer_zeroed::<i32>(3 * items);
        k.arg_buffer(0, &limb)
            .arg_buffer(1, &inb)
            .arg_buffer(2, &out);
        ctx.run(&k, &[items], Some(&[32]));
        assert_eq!(
            ctx.read::<i32>(&out, 3 * items),
            host_do_while(lim, &input),
            "do_while, limits {what}"
        );
    }
    let limits: [(&str, Vec<i32>); 2] = [
        ("equal", vec![5000; items]),
        (
            "per item",
            (0..items as i32)
                .map(|g| 10 * (g % 9) * (g % 9) * (g % 9))
                .collect(),
        ),
    ];
    for (what, lim) in &limits {
        let limb = ctx.buffer_from(lim);
        let k = program.kernel("breaks");
        let out = ctx.buffer_zeroed::<i32>(2 * items);
        k.arg_buffer(0, &limb)
            .arg_buffer(1, &inb)
            .arg_buffer(2, &out);
        ctx.run(&k, &[items], Some(&[32]));
        assert_eq!(
            ctx.read::<i32>(&out, 2 * items),
            host_breaks(lim, &input),
            "breaks, limits {what}"
        );
    }
}
