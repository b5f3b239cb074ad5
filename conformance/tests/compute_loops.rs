//! Divergent loops of plain arithmetic, compared with host references. Such kernels
//! run at sub-group width 16 (`jit::compute_loop`), and the loop passes after the
//! mid-end move their values around (`lower::loop_pressure`: mask operations
//! hoisted, products recomputed, the values of exiting lanes parked in stack slots;
//! `lower::loop_spill`: invariants of crowded loops reloaded from memory). The
//! kernels check that every lane still leaves with its own values: escape-time
//! loops (mandelbrot) on ranges that are not multiples of 16 (partial sub-groups),
//! an integer loop, and a loop carrying four floats at a required width of 16.

use cranecl_conformance::*;

/// The escape-time count of each pixel of a `w` x `h` grid, without contraction so
/// that the host's plain `f32` operations give the same values.
const MANDEL: &str = r#"
#pragma OPENCL FP_CONTRACT OFF
kernel void k(global int* out, int w, float x0, float y0, float dx, float dy, int maxit) {
    int px = get_global_id(0);
    int py = get_global_id(1);
    float cr = x0 + (float)px * dx;
    float ci = y0 + (float)py * dy;
    float zr = 0.0f, zi = 0.0f;
    int it = 0;
    while (it < maxit && zr * zr + zi * zi <= 4.0f) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        it++;
    }
    out[py * w + px] = it;
}
"#;

fn mandel_host(w: usize, h: usize, x0: f32, y0: f32, dx: f32, dy: f32, maxit: i32) -> Vec<i32> {
    let mut out = vec![0; w * h];
    for py in 0..h {
        for px in 0..w {
            let cr = x0 + px as f32 * dx;
            let ci = y0 + py as f32 * dy;
            let (mut zr, mut zi, mut it) = (0.0f32, 0.0f32, 0);
            while it < maxit && zr * zr + zi * zi <= 4.0 {
                let t = zr * zr - zi * zi + cr;
                zi = 2.0 * zr * zi + ci;
                zr = t;
                it += 1;
            }
            out[py * w + px] = it;
        }
    }
    out
}

#[test]
fn escape_time_loop_keeps_each_lanes_count() {
    let ctx = DeviceContext::new();
    let k = ctx.kernel(MANDEL, "", "k");
    for (w, h, maxit) in [
        (100usize, 37usize, 64),
        (64, 16, 200),
        (19, 5, 1),
        (48, 9, 0),
    ] {
        let (x0, y0) = (-2.0f32, -1.25f32);
        let (dx, dy) = (2.5 / w as f32, 2.5 / h as f32);
        let o = ctx.buffer_zeroed::<i32>(w * h);
        k.arg_buffer(0, &o)
            .arg(1, w as i32)
            .arg(2, x0)
            .arg(3, y0)
            .arg(4, dx)
            .arg(5, dy)
            .arg(6, maxit);
        ctx.run(&k, &[w, h], None);
        let got: Vec<i32> = ctx.read(&o, w * h);
        let want = mandel_host(w, h, x0, y0, dx, dy, maxit);
        for (i, (g, e)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g,
                e,
                "pixel ({}, {}) of {w}x{h}, maxit {maxit}",
                i % w,
                i / w
            );
        }
    }
}

#[test]
fn integer_loop_with_two_carried_values() {
    let src = r#"
kernel void k(global const int* in, global int* out, int maxit) {
    size_t i = get_global_id(0);
    uint y = (uint)in[i] + 1u;
    int steps = 0;
    while (y != 1u && steps < maxit) {
        y = (y & 1u) ? 3u * y + 1u : y >> 1;
        steps++;
    }
    out[2 * i] = steps;
    out[2 * i + 1] = (int)y;
}
"#;
    let n = 1001;
    let mut rng = TestRng::new(7);
    let input: Vec<i32> = rng.vec(n, |r| (r.next_u32() % 5000) as i32);
    let ctx = DeviceContext::new();
    let a = ctx.buffer_from(&input);
    let o = ctx.buffer_zeroed::<i32>(2 * n);
    let k = ctx.kernel(src, "", "k");
    for maxit in [0, 3, 40, 1000] {
        k.arg_buffer(0, &a).arg_buffer(1, &o).arg(2, maxit);
        ctx.run(&k, &[n], None);
        let got: Vec<i32> = ctx.read(&o, 2 * n);
        for (i, &x) in input.iter().enumerate() {
            let mut y = x as u32 + 1;
            let mut steps = 0;
            while y != 1 && steps < maxit {
                y = if y & 1 != 0 { 3 * y + 1 } else { y >> 1 };
                steps += 1;
            }
            assert_eq!(
                &got[2 * i..2 * i + 2],
                &[steps, y as i32],
                "x = {x}, maxit = {maxit}"
            );
        }
    }
}

#[test]
fn wide_loop_carrying_four_floats_and_reading_invariants() {
    // At width 16 the loop carries sixteen vectors and the mask's four: its
    // invariants (a, b, c, d and the lane's own s) go to stack slots.
    let src = r#"
#pragma OPENCL FP_CONTRACT OFF
__attribute__((intel_reqd_sub_group_size(16)))
kernel void k(global const float* in, global float* out, float a, float b, float c, float d) {
    size_t i = get_global_id(0);
    float s = in[i];
    float p = s, q = 1.0f, r = 0.5f, t = 0.0f;
    int it = 0;
    while (p * p + q * q < 1000.0f && it < 300) {
        float p2 = p * a + q * b + s;
        float q2 = q * c - r * d + s * 0.25f;
        r = r * 0.5f + p2 * 0.125f;
        t = t + p2 - q2;
        p = p2;
        q = q2;
        it++;
    }
    out[2 * i] = p + q + r + t;
    out[2 * i + 1] = (float)it;
}
"#;
    let n = 999;
    let mut rng = TestRng::new(3);
    let input: Vec<f32> = rng.vec(n, |r| (r.next_u32() % 2000) as f32 / 1000.0 - 1.0);
    let (a, b, c, d) = (1.01f32, 0.3f32, 0.97f32, 0.2f32);
    let ctx = DeviceContext::new();
    let x = ctx.buffer_from(&input);
    let o = ctx.buffer_zeroed::<f32>(2 * n);
    let k = ctx.kernel(src, "", "k");
    k.arg_buffer(0, &x)
        .arg_buffer(1, &o)
        .arg(2, a)
        .arg(3, b)
        .arg(4, c)
        .arg(5, d);
    ctx.run(&k, &[n], None);
    let got: Vec<f32> = ctx.read(&o, 2 * n);
    for (i, &s) in input.iter().enumerate() {
        let (mut p, mut q, mut r, mut t) = (s, 1.0f32, 0.5f32, 0.0f32);
        let mut it = 0;
        while p * p + q * q < 1000.0 && it < 300 {
            let p2 = p * a + q * b + s;
            let q2 = q * c - r * d + s * 0.25;
            r = r * 0.5 + p2 * 0.125;
            t = t + p2 - q2;
            p = p2;
            q = q2;
            it += 1;
        }
        let want = [p + q + r + t, it as f32];
        assert_eq!(&got[2 * i..2 * i + 2], &want, "s = {s}");
    }
}
