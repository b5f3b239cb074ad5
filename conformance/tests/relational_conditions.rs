//! OpenCL C relational built-ins (`isnan`, `isinf`, `signbit`, `isequal`...) return
//! `int` (`-1`/`0` per component for vectors), and conditions built on them compare
//! that `int` with a constant; the compiler turns the compare back into the
//! condition or its negation (`jit::analysis::simplify`). Each form is checked on
//! NaNs, infinities, signed zeros and ordinary values against the host.

use cranecl_conformance::*;

const SOURCE: &str = r#"
#define fmax_nanprop(a, b) (isnan(a) || isnan(b)) ? a+b : fmax(a, b)

kernel void scalar_forms(global const float *a, global const float *b, global int *out)
{
    size_t i = get_global_id(0);
    float x = a[i], y = b[i];
    int r = 0;
    r |= (isnan(x) == 0) << 0;
    r |= (isnan(x) != 0) << 1;
    r |= (isinf(y) == 1) << 2;
    r |= (0 == signbit(x)) << 3;
    r |= (isequal(x, y) != 1) << 4;
    r |= (isfinite(x) && !isnan(y)) << 5;
    float m = fmax_nanprop(x, y);
    out[2 * i] = r;
    out[2 * i + 1] = as_int(m);
}

kernel void vector_forms(global const float4 *a, global const float4 *b, global int4 *out)
{
    size_t i = get_global_id(0);
    int4 n = isnan(a[i]);
    int4 r = (n == (int4)(0)) ? (int4)(1) : (int4)(2);
    r += (isless(a[i], b[i]) != (int4)(-1)) ? (int4)(10) : (int4)(20);
    out[i] = r;
}
"#;

/// Values with every class a relational built-in tells apart.
fn samples(n: usize, shift: usize) -> Vec<f32> {
    let special = [
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        1.5,
        -2.25,
        f32::MIN_POSITIVE,
        f32::MAX,
    ];
    (0..n)
        .map(|i| special[(i * 7 + shift) % special.len()])
        .collect()
}

#[test]
fn scalar_relational_conditions_and_nan_propagating_max() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SOURCE, "");
    let k = program.kernel("scalar_forms");
    let n = 203usize;
    let (a, b) = (samples(n, 0), samples(n, 3));
    let (ba, bb, bo) = (
        ctx.buffer_from(&a),
        ctx.buffer_from(&b),
        ctx.buffer_zeroed::<i32>(2 * n),
    );
    k.arg_buffer(0, &ba).arg_buffer(1, &bb).arg_buffer(2, &bo);
    ctx.run(&k, &[n], None);
    let out: Vec<i32> = ctx.read(&bo, 2 * n);
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let want = i32::from(!x.is_nan())
            | i32::from(x.is_nan()) << 1
            | i32::from(y.is_infinite()) << 2
            | i32::from(!x.is_sign_negative()) << 3
            | i32::from(x != y) << 4
            | i32::from(x.is_finite() && !y.is_nan()) << 5;
        assert_eq!(out[2 * i], want, "conditions of ({x}, {y})");
        let m = f32::from_bits(out[2 * i + 1] as u32);
        if x.is_nan() || y.is_nan() {
            assert!(m.is_nan(), "fmax_nanprop({x}, {y}) = {m}");
        } else {
            // fmax of +0 and -0 may be either zero.
            assert_eq!(m, x.max(y), "fmax_nanprop({x}, {y})");
        }
    }
}

#[test]
fn vector_relational_conditions() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SOURCE, "");
    let k = program.kernel("vector_forms");
    let n = 61usize;
    let (a, b) = (samples(4 * n, 1), samples(4 * n, 5));
    let (ba, bb, bo) = (
        ctx.buffer_from(&a),
        ctx.buffer_from(&b),
        ctx.buffer_zeroed::<i32>(4 * n),
    );
    k.arg_buffer(0, &ba).arg_buffer(1, &bb).arg_buffer(2, &bo);
    ctx.run(&k, &[n], None);
    let out: Vec<i32> = ctx.read(&bo, 4 * n);
    for j in 0..4 * n {
        let want = if a[j].is_nan() { 2 } else { 1 } + if a[j] < b[j] { 20 } else { 10 };
        assert_eq!(out[j], want, "component {j}: ({}, {})", a[j], b[j]);
    }
}
