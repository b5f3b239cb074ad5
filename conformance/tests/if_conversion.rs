//! Small side-effect-free branches that the compiler turns into selects
//! (`jit::analysis::ifconvert`), against host references: pyopencl's NaN-propagating
//! `max` reduction (`||` and `?:` short-circuits) with NaNs on some lanes, if/else
//! diamonds with several statements and vector phis, nested `&&`/`||` conditions, a
//! branch around an integer division by zero (must stay a branch: no lane may divide
//! by zero) and one around a load past the end of a buffer (must not be read).

use cranecl_conformance::*;

const SOURCE: &str = r#"
#define fmax_nanprop(a, b) (isnan(a) || isnan(b)) ? a+b : fmax(a, b)

kernel void nanmax(global const float *in, global float *out, long n, long step) {
    float acc = -INFINITY;
    for (long i = get_global_id(0); i < n; i += step)
        acc = fmax_nanprop(acc, in[i]);
    out[get_global_id(0)] = acc;
}

kernel void diamond(global const float4 *a, global const float *x, global float4 *out) {
    size_t i = get_global_id(0);
    float4 t, u;
    if (x[i] > 0.5f) {
        t = a[i] + (float4)(1.0f, 2.0f, 3.0f, 4.0f);
        u = t * 2.0f;
    } else {
        t = a[i] - 1.5f;
        u = fabs(t) + x[i];
    }
    out[i] = t + u;
}

kernel void logic(global const int *a, global const int *b, global int *out) {
    size_t i = get_global_id(0);
    int x = a[i], y = b[i];
    int r;
    if ((x > 3 && y < 10) || (x == y && (x & 1)))
        r = x * 3 + y;
    else if (x < -5 || y > 100)
        r = min(x, y) - 7;
    else
        r = x ^ y;
    out[i] = r;
}

kernel void guarded(global const int *a, global const int *d, global int *out, int n) {
    size_t i = get_global_id(0);
    int q;
    if (d[i] != 0)
        q = a[i] / d[i];
    else
        q = -1;
    int v = 0;
    if ((int)i < n)
        v = a[i + 8];
    out[i] = q + v;
}
"#;

fn nanmax_host(acc: f32, v: f32) -> f32 {
    if acc.is_nan() || v.is_nan() {
        acc + v
    } else {
        acc.max(v)
    }
}

#[test]
fn nan_propagating_max_reduction() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SOURCE, "");
    let k = program.kernel("nanmax");
    let (n, global) = (5000usize, 96usize);
    let mut data: Vec<f32> = (0..n).map(|i| ((i * 37) % 1001) as f32 - 500.0).collect();
    // NaNs reach some work-items' walks and not others.
    for i in [7usize, 300, 301, 4999] {
        data[i] = f32::NAN;
    }
    let bin = ctx.buffer_from(&data);
    let bout = ctx.buffer_zeroed::<f32>(global);
    k.arg_buffer(0, &bin)
        .arg_buffer(1, &bout)
        .arg(2, n as i64)
        .arg(3, global as i64);
    ctx.run(&k, &[global], Some(&[32]));
    let got: Vec<f32> = ctx.read(&bout, global);
    for (g, got) in got.iter().enumerate() {
        let want = (g..n)
            .step_by(global)
            .fold(f32::NEG_INFINITY, |a, i| nanmax_host(a, data[i]));
        assert!(
            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
            "work-item {g}: {got} vs host {want}"
        );
    }
}

#[test]
fn diamond_with_vector_phis() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SOURCE, "");
    let k = program.kernel("diamond");
    let n = 203usize;
    let a: Vec<f32> = (0..4 * n).map(|i| (i % 23) as f32 * 0.25 - 2.0).collect();
    let x: Vec<f32> = (0..n).map(|i| ((i * 7) % 10) as f32 / 10.0).collect();
    let (ba, bx) = (ctx.buffer_from(&a), ctx.buffer_from(&x));
    let bout = ctx.buffer_zeroed::<f32>(4 * n);
    k.arg_buffer(0, &ba).arg_buffer(1, &bx).arg_buffer(2, &bout);
    ctx.run(&k, &[n], None);
    let got: Vec<f32> = ctx.read(&bout, 4 * n);
    for i in 0..n {
        for c in 0..4 {
            let ai = a[4 * i + c];
            let (t, u) = if x[i] > 0.5 {
                let t = ai + (c + 1) as f32;
                (t, t * 2.0)
            } else {
                let t = ai - 1.5;
                (t, t.abs() + x[i])
            };
            assert_eq!(got[4 * i + c], t + u, "item {i} component {c}");
        }
    }
}

#[test]
fn nested_logical_conditions() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SOURCE, "");
    let k = program.kernel("logic");
    let n = 517usize;
    let a: Vec<i32> = (0..n as i32).map(|i| (i * 13) % 31 - 12).collect();
    let b: Vec<i32> = (0..n as i32).map(|i| (i * 7) % 140 - 20).collect();
    let (ba, bb) = (ctx.buffer_from(&a), ctx.buffer_from(&b));
    let bout = ctx.buffer_zeroed::<i32>(n);
    k.arg_buffer(0, &ba).arg_buffer(1, &bb).arg_buffer(2, &bout);
    ctx.run(&k, &[n], None);
    let want: Vec<i32> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| {
            if (x > 3 && y < 10) || (x == y && (x & 1) != 0) {
                x * 3 + y
            } else if x < -5 || y > 100 {
                x.min(y) - 7
            } else {
                x ^ y
            }
        })
        .collect();
    assert_eq!(ctx.read::<i32>(&bout, n), want);
}

#[test]
fn division_and_load_stay_behind_their_branches() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SOURCE, "");
    let k = program.kernel("guarded");
    // Work-items 0..n read a[i + 8]: a has exactly n + 8 elements.
    let (items, n) = (64usize, 40usize);
    let a: Vec<i32> = (0..(n + 8) as i32).map(|i| i * 5 - 60).collect();
    let d: Vec<i32> = (0..items as i32).map(|i| i % 4 - 1).collect();
    let mut a_padded = a.clone();
    a_padded.resize(items, 0);
    let (ba, bd) = (ctx.buffer_from(&a_padded), ctx.buffer_from(&d));
    let bout = ctx.buffer_zeroed::<i32>(items);
    k.arg_buffer(0, &ba)
        .arg_buffer(1, &bd)
        .arg_buffer(2, &bout)
        .arg(3, n as i32);
    ctx.run(&k, &[items], Some(&[16]));
    let want: Vec<i32> = (0..items)
        .map(|i| {
            let q = if d[i] != 0 { a_padded[i] / d[i] } else { -1 };
            let v = if i < n { a_padded[i + 8] } else { 0 };
            q + v
        })
        .collect();
    assert_eq!(ctx.read::<i32>(&bout, items), want);
}
