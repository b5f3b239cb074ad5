//! `pow(x, c)` with a constant half-integer exponent `c` in {0.5, 1, ..., 4} (lowered
//! inline to products and a square root, not the general `exp2(y log2 x)` routine),
//! against the host's `pow`: within a few ulp on every operand class (random bit
//! patterns, subnormals, values whose result overflows or underflows), and exact on the
//! special values (`pow(-0, 1.5) = +0`, `pow(-inf, 0.5) = +inf`, NaN for negative `x`
//! and a non-integer `c`, `-0` and `-inf` kept for odd integer `c`). `float` and
//! `double`, varying `x` (scalar and a vector with a different constant per
//! component) and a uniform `x` (a kernel argument), over a partial last sub-group.

use cranecl_conformance::*;

/// The constant exponents, as written in the kernel.
const EXPS: [&str; 8] = ["0.5", "1.0", "1.5", "2.0", "2.5", "3.0", "3.5", "4.0"];
/// Results per work-item: one per exponent, a 2-vector, the uniform operand's.
const NC: usize = EXPS.len() + 3;
/// Largest accepted distance from the host's `pow` (the lowering needs about 2).
const MAX_ULP: u64 = 4;

/// The kernel for `t` (`float` or `double`, constant suffix `s`).
fn source(t: &str, s: &str) -> String {
    let mut body = String::new();
    for (j, c) in EXPS.iter().enumerate() {
        body += &format!("    out[i * {NC} + {j}] = pow(v, {c}{s});\n");
    }
    let k = EXPS.len();
    format!(
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
         kernel void k(global const {t}* x, global {t}* out, {t} u) {{\n    \
         size_t i = get_global_id(0);\n    {t} v = x[i];\n{body}    \
         {t}2 r = pow(({t}2)(v, -v), ({t}2)(1.5{s}, 3.0{s}));\n    \
         out[i * {NC} + {k}] = r.x;\n    out[i * {NC} + {k} + 1] = r.y;\n    \
         out[i * {NC} + {k} + 2] = pow(u, 2.5{s});\n}}\n",
        k = k
    )
}

/// Operands: special values, subnormals, results near overflow and underflow, values
/// of a typical range, and random bit patterns.
fn inputs_f64(rng: &mut TestRng, bits: fn(u64) -> f64, specials: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = specials.to_vec();
    for _ in 0..500 {
        v.push(f64::from(rng.f32_in(0.0, 8.0)));
    }
    for _ in 0..2500 {
        v.push(bits(rng.next_u64()));
    }
    v.push(1.0);
    v
}

/// What the check needs of `f32` and `f64`.
trait Host: Copy + std::fmt::Debug + std::ops::Neg<Output = Self> {
    /// The host's `pow(self, c)`, rounded to `Self`.
    fn host_pow(self, c: f64) -> Self;
    /// Distance in ulp.
    fn ulps(self, other: Self) -> u64;
    /// False for zeros of different signs.
    fn same_zero_sign(self, other: Self) -> bool;
}

impl Host for f32 {
    fn host_pow(self, c: f64) -> f32 {
        f64::from(self).powf(c) as f32
    }
    fn ulps(self, other: f32) -> u64 {
        ulp_distance_f32(self, other)
    }
    fn same_zero_sign(self, other: f32) -> bool {
        self != 0.0 || self.to_bits() == other.to_bits()
    }
}

impl Host for f64 {
    fn host_pow(self, c: f64) -> f64 {
        self.powf(c)
    }
    fn ulps(self, other: f64) -> u64 {
        ulp_distance_f64(self, other)
    }
    fn same_zero_sign(self, other: f64) -> bool {
        self != 0.0 || self.to_bits() == other.to_bits()
    }
}

/// Checks `got` (the kernel's results for `xs` and the uniform `u`) against the host.
fn check<T: Host>(xs: &[T], u: T, got: &[T]) {
    let exps: Vec<f64> = EXPS.iter().map(|c| c.parse().unwrap()).collect();
    let k = exps.len();
    for (i, &x) in xs.iter().enumerate() {
        let row = &got[i * NC..(i + 1) * NC];
        let mut cases: Vec<(T, f64, T)> = exps.iter().zip(row).map(|(&c, &h)| (x, c, h)).collect();
        cases.push((x, 1.5, row[k]));
        cases.push((-x, 3.0, row[k + 1]));
        cases.push((u, 2.5, row[k + 2]));
        for (x, c, have) in cases {
            let want = x.host_pow(c);
            let d = have.ulps(want);
            assert!(
                d <= MAX_ULP && have.same_zero_sign(want),
                "pow({x:?}, {c}) = {have:?}, host {want:?} ({d} ulp)"
            );
        }
    }
}

#[test]
fn float_pow_of_constant_half_integers_matches_the_host() {
    let ctx = DeviceContext::new();
    let mut rng = TestRng::new(0x9e37_79b9);
    let specials = [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -1.0,
        -2.5,
        1e-45,
        -1e-45,
        1e-40,
        f64::from(f32::MIN_POSITIVE),
        f64::from(f32::MAX),
        2f64.powi(85),
        2f64.powi(-60),
        2f64.powi(-100),
        1.7e10,
        3.0e-13,
    ];
    let xs: Vec<f32> = inputs_f64(&mut rng, |b| f64::from(f32::from_bits(b as u32)), &specials)
        .into_iter()
        .map(|x| x as f32)
        .collect();
    let n = xs.len(); // 3018: not a multiple of the sub-group width
    let u = 3.75f32;
    let kernel = ctx.kernel(&source("float", "f"), "", "k");
    let inbuf = ctx.buffer_from(&xs);
    let out = ctx.buffer_zeroed::<f32>(n * NC);
    kernel.arg_buffer(0, &inbuf).arg_buffer(1, &out).arg(2, u);
    ctx.run(&kernel, &[n], None);
    let got = ctx.read::<f32>(&out, n * NC);
    check(&xs, u, &got);
}

#[test]
fn double_pow_of_constant_half_integers_matches_the_host() {
    let ctx = DeviceContext::new();
    if !require(ctx.has_extension("cl_khr_fp64"), "cl_khr_fp64") {
        return;
    }
    let mut rng = TestRng::new(0x51_7cc1);
    let specials = [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -1.0,
        -2.5,
        5e-324,
        -5e-324,
        1e-310,
        f64::MIN_POSITIVE,
        f64::MAX,
        2f64.powi(682),
        2f64.powi(-400),
        2f64.powi(-700),
        1.7e100,
        3.0e-130,
    ];
    let xs = inputs_f64(&mut rng, f64::from_bits, &specials);
    let n = xs.len();
    let u = 3.75f64;
    let kernel = ctx.kernel(&source("double", ""), "", "k");
    let inbuf = ctx.buffer_from(&xs);
    let out = ctx.buffer_zeroed::<f64>(n * NC);
    kernel.arg_buffer(0, &inbuf).arg_buffer(1, &out).arg(2, u);
    ctx.run(&kernel, &[n], None);
    let got = ctx.read::<f64>(&out, n * NC);
    check(&xs, u, &got);
}
