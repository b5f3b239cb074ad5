//! Divergent loops in the lane model, compared with host references: loops whose
//! lanes leave in different iterations through a uniform and a varying exit,
//! nested loops whose inner trip count varies per lane and per outer iteration,
//! loops with `continue` (two back edges) and `break`, and unsigned 64-bit values carried
//! around them. The lowering writes a loop header's phis without a blend and skips
//! the work of exit edges that no lane takes; these kernels check lanes keep their
//! own values through both. Global sizes are not multiples of the sub-group
//! width, so partial sub-groups run the same code.

use cranecl_conformance::*;

const N: usize = 1003;

fn inputs(seed: u64, modulo: u32) -> Vec<i32> {
    let mut rng = TestRng::new(seed);
    rng.vec(N, |r| (r.next_u32() % modulo) as i32)
}

/// Runs `k(global const int* in, global int* out, int p)` and returns `out`.
fn run(src: &str, input: &[i32], p: i32, out_per_item: usize) -> Vec<i32> {
    let ctx = DeviceContext::new();
    let a = ctx.buffer_from(input);
    let o = ctx.buffer_zeroed::<i32>(input.len() * out_per_item);
    let k = ctx.kernel(src, "", "k");
    k.arg_buffer(0, &a).arg_buffer(1, &o).arg(2, p);
    ctx.run(&k, &[input.len()], None);
    ctx.read(&o, input.len() * out_per_item)
}

#[test]
fn loop_with_uniform_and_varying_exits_keeps_each_lanes_values() {
    let src = r#"
kernel void k(global const int* in, global int* out, int maxit) {
    size_t i = get_global_id(0);
    int y = in[i] + 1;
    ulong acc = (ulong)y;
    float f = 0.0f;
    int it = 0;
    while (it < maxit && y != 1) {
        y = (y & 1) ? 3 * y + 1 : y / 2;
        acc = acc * 3 + y;
        f = f * 0.5f + (float)(y & 7);
        it++;
    }
    out[3 * i] = it;
    out[3 * i + 1] = (int)(acc ^ (acc >> 29));
    out[3 * i + 2] = (int)(f * 1024.0f);
}
"#;
    let input = inputs(11, 1000);
    for maxit in [0, 1, 17, 60, 200] {
        let got = run(src, &input, maxit, 3);
        for (k, &x) in input.iter().enumerate() {
            let mut y = x + 1;
            let mut acc = y as u64;
            let mut f = 0.0f32;
            let mut it = 0;
            while it < maxit && y != 1 {
                y = if y & 1 != 0 { 3 * y + 1 } else { y / 2 };
                acc = acc.wrapping_mul(3).wrapping_add(y as u64);
                f = f * 0.5 + (y & 7) as f32;
                it += 1;
            }
            let want = [it, (acc ^ (acc >> 29)) as i32, (f * 1024.0) as i32];
            assert_eq!(&got[3 * k..3 * k + 3], &want, "x = {x}, maxit = {maxit}");
        }
    }
}

#[test]
fn nested_loops_with_per_lane_trip_counts() {
    let src = r#"
kernel void k(global const int* in, global int* out, int n) {
    size_t i = get_global_id(0);
    int x = in[i];
    int total = 0;
    float g = 1.0f;
    for (int a = 0; a < (x & 7); a++) {
        int s = a;
        for (int b = 0; b < ((x >> 3) & 7) + a; b++) {
            s = s * 3 + b;
            if (s > 100000) s -= 99999;
        }
        for (int b = 0; b < n; b++)
            g = g * 0.5f + (float)(a + b);
        total += s;
    }
    out[2 * i] = total;
    out[2 * i + 1] = (int)(g * 256.0f);
}
"#;
    let input = inputs(12, 4096);
    for n in [0, 3] {
        let got = run(src, &input, n, 2);
        for (k, &x) in input.iter().enumerate() {
            let mut total = 0i32;
            let mut g = 1.0f32;
            for a in 0..(x & 7) {
                let mut s = a;
                for b in 0..((x >> 3) & 7) + a {
                    s = s * 3 + b;
                    if s > 100000 {
                        s -= 99999;
                    }
                }
                for b in 0..n {
                    g = g * 0.5 + (a + b) as f32;
                }
                total += s;
            }
            assert_eq!(
                &got[2 * k..2 * k + 2],
                &[total, (g * 256.0) as i32],
                "x = {x}, n = {n}"
            );
        }
    }
}

#[test]
fn loop_with_continue_and_break_merges_both_back_edges() {
    let src = r#"
kernel void k(global const int* in, global int* out, int n) {
    size_t i = get_global_id(0);
    int x = in[i];
    int v = x;
    int c = 0;
    ulong w = (ulong)x;
    for (int j = 0; j < n; j++) {
        if ((v + j) % 3 == 0) { v += 7; w -= j; continue; }
        v = v * 5 % 1013;
        w = w * 7 + v;
        if (v == x % 1013) break;
        c += v & 3;
    }
    out[2 * i] = v * 1000 + c;
    out[2 * i + 1] = (int)(w ^ (w >> 31));
}
"#;
    let input = inputs(13, 2000);
    for n in [5, 40] {
        let got = run(src, &input, n, 2);
        for (k, &x) in input.iter().enumerate() {
            let (mut v, mut c, mut w) = (x, 0i32, x as u64);
            for j in 0..n {
                if (v + j) % 3 == 0 {
                    v += 7;
                    w = w.wrapping_sub(j as u64);
                    continue;
                }
                v = v * 5 % 1013;
                w = w.wrapping_mul(7).wrapping_add(v as u64);
                if v == x % 1013 {
                    break;
                }
                c += v & 3;
            }
            assert_eq!(
                &got[2 * k..2 * k + 2],
                &[v * 1000 + c, (w ^ (w >> 31)) as i32],
                "x = {x}, n = {n}"
            );
        }
    }
}

#[test]
fn long_and_double_values_merge_per_lane_after_divergent_branches() {
    // 64-bit phis and selects under a partial mask: each lane keeps its own branch.
    let src = r#"
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void k(global const int* in, global int* out, int p) {
    size_t i = get_global_id(0);
    int x = in[i];
    long a = (long)x * 1000003L;
    double d = (double)x;
    if (x % 3 == p) {
        a = a * 7 - x;
        d = d * 0.25 + 3.0;
    } else if (x & 4) {
        a = -a;
    } else {
        d = -d;
    }
    long s = (x & 8) ? a : (long)x << 33;
    out[3 * i] = (int)(a ^ (a >> 32));
    out[3 * i + 1] = (int)(s >> 20);
    out[3 * i + 2] = (int)(d * 8.0);
}
"#;
    let ctx = DeviceContext::new();
    if !require(ctx.has_extension("cl_khr_fp64"), "cl_khr_fp64") {
        return;
    }
    let input = inputs(14, 100000);
    for p in [0, 2] {
        let got = run(src, &input, p, 3);
        for (k, &x) in input.iter().enumerate() {
            let mut a = x as i64 * 1000003;
            let mut d = x as f64;
            if x % 3 == p {
                a = a * 7 - x as i64;
                d = d * 0.25 + 3.0;
            } else if x & 4 != 0 {
                a = -a;
            } else {
                d = -d;
            }
            let s = if x & 8 != 0 { a } else { (x as i64) << 33 };
            let want = [(a ^ (a >> 32)) as i32, (s >> 20) as i32, (d * 8.0) as i32];
            assert_eq!(&got[3 * k..3 * k + 3], &want, "x = {x}, p = {p}");
        }
    }
}

#[test]
fn pointer_walking_a_row_in_uniform_and_divergent_loops() {
    // `a + row * n` is the same for every lane of a sub-group that lies in one row
    // (its loop phi is then one scalar), and differs per lane when a sub-group spans
    // rows (local sizes whose x is not a multiple of the sub-group width).
    let src = r#"
kernel void k(global const int* a, global int* out, int n) {
    int col = get_global_id(0);
    int row = get_global_id(1);
    int w = get_global_size(0);
    global const int* p = a + row * n;
    int acc = 0;
    for (int k = 0; k < n; k++)
        acc += p[k] * (col + k);
    if (col & 1) {
        global const int* q = a + row * n;
        for (int k = 0; k < col % 5; k++)
            acc += q[k] * 3;
    }
    out[row * w + col] = acc;
}
"#;
    let (w, h, n) = (24usize, 6usize, 7usize);
    let mut rng = TestRng::new(15);
    let a: Vec<i32> = rng.vec(h * n, |r| (r.next_u32() % 100) as i32);
    let ctx = DeviceContext::new();
    let k = ctx.kernel(src, "", "k");
    let ab = ctx.buffer_from(&a);
    for local in [Some([8usize, 1]), Some([3, 2]), Some([12, 3]), None] {
        let o = ctx.buffer_zeroed::<i32>(w * h);
        k.arg_buffer(0, &ab).arg_buffer(1, &o).arg(2, n as i32);
        ctx.run(&k, &[w, h], local.as_ref().map(|l| &l[..]));
        let got: Vec<i32> = ctx.read(&o, w * h);
        for row in 0..h {
            for col in 0..w {
                let mut acc = 0i32;
                for kk in 0..n {
                    acc += a[row * n + kk] * (col + kk) as i32;
                }
                if col & 1 != 0 {
                    for kk in 0..col % 5 {
                        acc += a[row * n + kk] * 3;
                    }
                }
                assert_eq!(
                    got[row * w + col],
                    acc,
                    "row {row} col {col} local {local:?}"
                );
            }
        }
    }
}
