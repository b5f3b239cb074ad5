//! ULP checks of the vector routines against `f64` references (the `f64` libm, within
//! an `f64` ulp: 2^-29 of an `f32` ulp), on seeded random operands over every exponent
//! and over each function's working range, through the run-time dispatched entries and
//! through both fused and unfused compilations of the lane code; special operands are
//! compared bit for bit with the scalar library. `exhaustive_*` (ignored) sweeps all
//! `f32` operands: `cargo test -p cranecl-jit --release vmath -- --ignored`.

use super::*;

/// xorshift64*: a reproducible operand stream.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn bits(&mut self) -> f32 {
        f32::from_bits(self.next() as u32)
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        let u = (self.next() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * u
    }
}

/// The error of `got` in `f32` ulps of the reference `want` (0 if both are the same
/// NaN-ness/infinity, infinite if they disagree on it).
fn ulps(got: f32, want: f64) -> f64 {
    if want.is_nan() {
        return if got.is_nan() { 0.0 } else { f64::INFINITY };
    }
    if got.is_nan() {
        return f64::INFINITY;
    }
    if got.is_infinite() {
        // Correct when the reference rounds to infinity (at or past MAX + half an ulp).
        let past = want.abs() >= 2f64.powi(128) - 2f64.powi(103);
        if past && f64::from(got.signum()) == want.signum() {
            return 0.0;
        }
        // An overflow to infinity counts as 2^128 (one ulp past f32::MAX's binade).
        let g = f64::from(got.signum()) * 2f64.powi(128);
        return (g - want).abs() / 2f64.powi(104);
    }
    if want.abs() >= 2f64.powi(128) {
        return f64::INFINITY;
    }
    let a = want.abs();
    let e = if a < 2f64.powi(-126) {
        -126
    } else {
        (a.log2().floor() as i32).min(127)
    };
    (f64::from(got) - want).abs() / 2f64.powi(e - 23)
}

/// The routine the JIT registers under `cranecl_<name>`.
fn entry(name: &str) -> VFn {
    routine(&format!("cranecl_{name}")).expect("a routine of the table")
}

type Run1 = unsafe fn(*const f32, *mut f32, usize);
type Run2 = unsafe fn(*const f32, *const f32, *mut f32, usize);

fn eval1(entry: VFn, xs: &[f32]) -> Vec<f32> {
    let mut out = vec![0.0f32; xs.len()];
    // SAFETY: xs and out hold xs.len() lanes each.
    unsafe { entry(xs.as_ptr(), xs.as_ptr(), out.as_mut_ptr(), xs.len()) };
    out
}

fn eval_run1(run: Run1, xs: &[f32]) -> Vec<f32> {
    let mut out = vec![0.0f32; xs.len()];
    // SAFETY: as above.
    unsafe { run(xs.as_ptr(), out.as_mut_ptr(), xs.len()) };
    out
}

/// Operands: random bits (every exponent and the special values), the working range
/// `lo..hi`, and a fixed list of special operands.
fn operands1(seed: u64, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    let mut r = Rng(seed);
    let mut v: Vec<f32> = SPECIAL.to_vec();
    for i in 0..n {
        v.push(if i % 2 == 0 {
            r.bits()
        } else {
            r.range(lo, hi)
        });
    }
    // A multiple of 4 lanes, as the code generator passes.
    while !v.len().is_multiple_of(4) {
        v.push(0.5);
    }
    v
}

const SPECIAL: [f32; 20] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    2.0,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    f32::MIN_POSITIVE,
    -f32::MIN_POSITIVE,
    1.0e-45,
    -1.0e-45,
    f32::MAX,
    f32::MIN,
    TRIG_MAX_F,
    -TRIG_MAX_F,
    std::f32::consts::FRAC_PI_2,
    std::f32::consts::PI,
    88.72,
];
const TRIG_MAX_F: f32 = core::TRIG_MAX;

fn check1(
    name: &str,
    entry: VFn,
    runs: [Run1; 2],
    slow: fn(f32) -> f32,
    reference: fn(f64) -> f64,
    range: (f32, f32),
    limit: f64,
) {
    let xs = operands1(0x5eed ^ name.len() as u64, 100_000, range.0, range.1);
    let mut results = vec![eval1(entry, &xs)];
    for r in runs {
        results.push(eval_run1(r, &xs));
    }
    for got in &results {
        let mut worst = (0.0f64, 0.0f32);
        for (x, g) in xs.iter().zip(got) {
            let e = ulps(*g, reference(f64::from(*x)));
            if e.is_nan() || e > worst.0 {
                worst = (e, *x);
            }
        }
        println!("{name}: worst {} ulp at {:e}", worst.0, worst.1);
        assert!(
            worst.0 <= limit,
            "{name}({:e}) = {:e}: {} ulp (reference {:e})",
            worst.1,
            got[xs
                .iter()
                .position(|x| x.to_bits() == worst.1.to_bits())
                .unwrap()],
            worst.0,
            reference(f64::from(worst.1))
        );
        for x in SPECIAL {
            let g = got[xs.iter().position(|y| y.to_bits() == x.to_bits()).unwrap()];
            let s = slow(x);
            if s.is_nan() || s.is_infinite() || s == 0.0 || s.abs() == 1.0 {
                assert!(
                    g.to_bits() == s.to_bits() || (g.is_nan() && s.is_nan()),
                    "{name}({x:e}) = {g:e}, the scalar library gives {s:e}"
                );
            }
        }
    }
}

/// `$w`: the block of the routine's compilations with FMA (`B32` for the routines with
/// `f32` kernels, else `B`).
macro_rules! unary_test {
    ($test:ident, $entry:ident, $t:ty, $reference:expr, $range:expr, $limit:expr) => {
        unary_test!($test, $entry, $t, $reference, $range, $limit, B);
    };
    ($test:ident, $entry:ident, $t:ty, $reference:expr, $range:expr, $limit:expr, $w:expr) => {
        #[test]
        fn $test() {
            check1(
                stringify!($entry),
                entry(stringify!($entry)),
                [run1::<$t, true, { $w }>, run1::<$t, false, B>],
                <$t>::slow,
                $reference,
                $range,
                $limit,
            );
        }
    };
}

// The limits asserted are 1 ulp (the OpenCL ones are 3 to 16): the f64 evaluation
// should give about 0.5. The f32 kernels of `sin`, `cos` (2 ulp over every operand, 4
// allowed) and `exp` (1 ulp, 3 allowed) have their own.
unary_test!(
    vmath_sin,
    vsin_f32,
    trig::Sin,
    f64::sin,
    (-100.0, 100.0),
    2.5,
    B32
);
unary_test!(
    vmath_cos,
    vcos_f32,
    trig::Cos,
    f64::cos,
    (-100.0, 100.0),
    2.5,
    B32
);
unary_test!(
    vmath_tan,
    vtan_f32,
    trig::Tan,
    f64::tan,
    (-100.0, 100.0),
    1.0
);
unary_test!(
    vmath_exp,
    vexp_f32,
    explog::Exp,
    f64::exp,
    (-104.0, 89.0),
    1.5,
    B32
);
unary_test!(
    vmath_exp2,
    vexp2_f32,
    explog::Exp2,
    f64::exp2,
    (-150.0, 128.0),
    1.0
);
unary_test!(
    vmath_exp10,
    vexp10_f32,
    explog::Exp10,
    |x| 10f64.powf(x),
    (-46.0, 39.0),
    1.0
);
unary_test!(vmath_log, vlog_f32, explog::Log, f64::ln, (0.0, 4.0), 1.0);
unary_test!(
    vmath_log2,
    vlog2_f32,
    explog::Log2,
    f64::log2,
    (0.0, 4.0),
    1.0
);
unary_test!(
    vmath_log10,
    vlog10_f32,
    explog::Log10,
    f64::log10,
    (0.0, 4.0),
    1.0
);
unary_test!(
    vmath_tanh,
    vtanh_f32,
    hyper::Tanh,
    f64::tanh,
    (-10.0, 10.0),
    1.0
);
unary_test!(vmath_erf, verf_f32, hyper::Erf, libm::erf, (-4.0, 4.0), 1.0);

fn check2(
    name: &str,
    entry: VFn,
    runs: [Run2; 2],
    slow: fn(f32, f32) -> f32,
    reference: fn(f64, f64) -> f64,
    limit: f64,
) {
    let mut r = Rng(0x90 ^ name.len() as u64);
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for a in SPECIAL {
        for b in SPECIAL {
            xs.push(a);
            ys.push(b);
        }
    }
    for i in 0..200_000 {
        let (x, y) = match i % 4 {
            0 => (r.bits(), r.bits()),
            1 => (r.range(0.0, 8.0), r.range(-30.0, 30.0)),
            2 => (r.bits().abs(), r.range(-4.0, 4.0)),
            _ => (r.range(0.5, 2.0), r.bits()),
        };
        xs.push(x);
        ys.push(y);
    }
    let mut results = Vec::new();
    let mut out = vec![0.0f32; xs.len()];
    // SAFETY: xs, ys and out hold xs.len() lanes each.
    unsafe { entry(xs.as_ptr(), ys.as_ptr(), out.as_mut_ptr(), xs.len()) };
    results.push(out.clone());
    for run in runs {
        // SAFETY: as above.
        unsafe { run(xs.as_ptr(), ys.as_ptr(), out.as_mut_ptr(), xs.len()) };
        results.push(out.clone());
    }
    for got in &results {
        for i in 0..xs.len() {
            let (x, y, g) = (xs[i], ys[i], got[i]);
            let s = slow(x, y);
            if s.is_nan() || s.is_infinite() || s == 0.0 || s.abs() == 1.0 {
                // Special values (and exact results) as the scalar library gives them.
                assert!(
                    g.to_bits() == s.to_bits() || (g.is_nan() && s.is_nan()),
                    "{name}({x:e}, {y:e}) = {g:e}, the scalar library gives {s:e}"
                );
            } else {
                let e = ulps(g, reference(f64::from(x), f64::from(y)));
                assert!(e <= limit, "{name}({x:e}, {y:e}) = {g:e}: {e} ulp");
            }
        }
    }
}

#[test]
fn vmath_pow() {
    check2(
        "pow",
        entry("vpow_f32"),
        [run2::<explog::Pow, true, B>, run2::<explog::Pow, false, B>],
        explog::Pow::slow,
        f64::powf,
        1.0,
    );
}

#[test]
fn vmath_powr() {
    check2(
        "powr",
        entry("vpowr_f32"),
        [
            run2::<explog::Powr, true, B>,
            run2::<explog::Powr, false, B>,
        ],
        explog::Powr::slow,
        f64::powf,
        1.0,
    );
}

#[test]
fn vmath_hypot() {
    check2(
        "hypot",
        entry("vhypot_f32"),
        [
            run2::<hypot::Hypot, true, B>,
            run2::<hypot::Hypot, false, B>,
        ],
        hypot::Hypot::slow,
        f64::hypot,
        0.51,
    );
}

/// `x` and its `k` neighbours on each side (bit patterns of the same sign).
fn around(x: f32, k: u32) -> impl Iterator<Item = f32> {
    let b = x.to_bits();
    (b.saturating_sub(k)..=b.saturating_add(k)).map(f32::from_bits)
}

/// Edge operands of the `f32` kernels (`core32`) against the `f64` references, through
/// the dispatched routine and both compilations of the lane code: subnormals, zeros,
/// infinities and NaN, `exp` at its overflow threshold, where results turn subnormal,
/// reach the last subnormal and round to 0, and past its clamps; `sin`/`cos` next to
/// multiples of pi/2 (up to 2^20: the reduction's hard cases), at the fast path's
/// limit and beyond it (the scalar path).
#[test]
fn vmath_f32_kernel_edges() {
    let mut common: Vec<f32> = vec![0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
    for x in [
        f32::from_bits(1),
        f32::from_bits(0x007f_ffff),
        f32::MIN_POSITIVE,
    ] {
        common.extend(around(x, 2));
        common.extend(around(-x, 2));
    }
    common.extend([f32::MAX, f32::MIN, 1.0e30, -1.0e30]);
    let mut exp_x = common.clone();
    // ln(f32::MAX + ulp/2), ln 2^-126, ln 2^-149, ln 2^-150: overflow, the subnormal
    // range's start, its last value, rounding to zero; the clamps at 89 and -104.
    for t in [
        88.722_84f32,
        -87.336_55,
        -103.278_93,
        -103.972_08,
        89.0,
        -104.0,
    ] {
        exp_x.extend(around(t, 300));
        exp_x.extend(around(t, 300).map(|x| -x));
    }
    let mut trig_x = common;
    for k in [
        1u32, 2, 3, 4, 5, 7, 10, 100, 1000, 12_345, 65_536, 300_000, 667_544,
    ] {
        let m = (f64::from(k) * std::f64::consts::FRAC_PI_2) as f32;
        trig_x.extend(around(m, 4));
        trig_x.extend(around(-m, 4));
    }
    for t in [
        TRIG_MAX_F,
        1.006_253e6,
        std::f32::consts::FRAC_PI_4,
        2.356_194_5,
    ] {
        trig_x.extend(around(t, 8));
        trig_x.extend(around(-t, 8));
    }
    type Case = (&'static str, VFn, [Run1; 2], fn(f64) -> f64, f64);
    let cases: [Case; 3] = [
        (
            "exp",
            entry("vexp_f32"),
            [
                run1::<explog::Exp, true, B32>,
                run1::<explog::Exp, false, B>,
            ],
            f64::exp,
            1.5,
        ),
        (
            "sin",
            entry("vsin_f32"),
            [run1::<trig::Sin, true, B32>, run1::<trig::Sin, false, B>],
            f64::sin,
            2.5,
        ),
        (
            "cos",
            entry("vcos_f32"),
            [run1::<trig::Cos, true, B32>, run1::<trig::Cos, false, B>],
            f64::cos,
            2.5,
        ),
    ];
    for (name, f, runs, reference, limit) in cases {
        let mut xs = if name == "exp" {
            exp_x.clone()
        } else {
            trig_x.clone()
        };
        while !xs.len().is_multiple_of(4) {
            xs.push(1.0);
        }
        let mut results = vec![eval1(f, &xs)];
        for r in runs {
            results.push(eval_run1(r, &xs));
        }
        for got in &results {
            for (x, g) in xs.iter().zip(got) {
                let e = ulps(*g, reference(f64::from(*x)));
                assert!(e <= limit, "{name}({x:e}) = {g:e}: {e} ulp");
            }
        }
    }
}

#[test]
fn vmath_table_is_consistent() {
    let syms = symbols();
    for (i, (s, _)) in syms.iter().enumerate() {
        assert!(syms[i + 1..].iter().all(|(t, _)| t != s), "{s} twice");
    }
    assert_eq!(lookup(ClOp::sin as u32), Some(("cranecl_vsin_f32", 1)));
    assert_eq!(lookup(ClOp::pow as u32), Some(("cranecl_vpow_f32", 2)));
    assert_eq!(lookup(ClOp::hypot as u32), Some(("cranecl_vhypot_f32", 2)));
    assert_eq!(lookup(ClOp::sinh as u32), None);
}

/// Every `f32` operand (or every `CRANECL_VMATH_STEP`-th bit pattern) of each unary
/// routine against its `f64` reference; prints the worst error.
#[test]
#[ignore]
fn exhaustive_unary() {
    let step: u64 = std::env::var("CRANECL_VMATH_STEP")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let only = std::env::var("CRANECL_VMATH_ONLY").ok();
    type Case = (&'static str, VFn, fn(f64) -> f64, f64);
    let fns: [Case; 11] = [
        ("sin", entry("vsin_f32"), f64::sin, 4.0),
        ("cos", entry("vcos_f32"), f64::cos, 4.0),
        ("tan", entry("vtan_f32"), f64::tan, 5.0),
        ("exp", entry("vexp_f32"), f64::exp, 3.0),
        ("exp2", entry("vexp2_f32"), f64::exp2, 3.0),
        ("exp10", entry("vexp10_f32"), |x| 10f64.powf(x), 3.0),
        ("log", entry("vlog_f32"), f64::ln, 3.0),
        ("log2", entry("vlog2_f32"), f64::log2, 3.0),
        ("log10", entry("vlog10_f32"), f64::log10, 3.0),
        ("tanh", entry("vtanh_f32"), f64::tanh, 5.0),
        ("erf", entry("verf_f32"), libm::erf, 16.0),
    ];
    for (name, f, reference, limit) in fns {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let mut worst = (0.0f64, 0u32);
        let mut xs = Vec::with_capacity(1 << 16);
        let mut bits = 0u64;
        while bits < 1 << 32 {
            xs.clear();
            while xs.len() < 1 << 16 && bits < 1 << 32 {
                xs.push(f32::from_bits(bits as u32));
                bits += step;
            }
            while !xs.len().is_multiple_of(4) {
                xs.push(1.0);
            }
            let got = eval1(f, &xs);
            for (x, g) in xs.iter().zip(&got) {
                let e = ulps(*g, reference(f64::from(*x)));
                if e.is_nan() || e > worst.0 {
                    worst = (e, x.to_bits());
                }
            }
        }
        println!(
            "{name}: worst {} ulp at {:e}",
            worst.0,
            f32::from_bits(worst.1)
        );
        assert!(worst.0 <= limit, "{name}: {} ulp", worst.0);
    }
}

/// Nanoseconds per lane of each routine called on 8-lane blocks (a sub-group of 8), as
/// the generated code calls them.
#[test]
#[ignore]
fn bench_routines() {
    let xs: Vec<f32> = (0..8).map(|i| 0.3 + i as f32 * 0.9).collect();
    let ys = [1.5f32; 8];
    let mut out = [0.0f32; 8];
    let fns: [(&str, VFn); 5] = [
        ("sin", entry("vsin_f32")),
        ("exp", entry("vexp_f32")),
        ("log", entry("vlog_f32")),
        ("pow", entry("vpow_f32")),
        ("tanh", entry("vtanh_f32")),
    ];
    for (name, f) in fns {
        // The best of 30 short runs: the machine is shared.
        let iters = 50_000;
        let mut best = f64::INFINITY;
        for _ in 0..30 {
            let t = std::time::Instant::now();
            for _ in 0..iters {
                // SAFETY: 8 lanes each.
                unsafe {
                    f(
                        std::hint::black_box(xs.as_ptr()),
                        ys.as_ptr(),
                        out.as_mut_ptr(),
                        8,
                    )
                };
                std::hint::black_box(&out);
            }
            best = best.min(t.elapsed().as_nanos() as f64 / (iters * 8) as f64);
        }
        println!("{name}: {best:.2} ns/lane");
    }
}

/// As the generated code runs them: 4M lanes streamed through 8-lane calls.
#[test]
#[ignore]
fn bench_stream() {
    let n = 1 << 22;
    let xs: Vec<f32> = (0..n).map(|i| (i % 8000) as f32 * 0.001).collect();
    let mut ys = vec![0.0f32; n];
    for name in ["vsin_f32", "vexp_f32", "vpow_f32"] {
        let f = entry(name);
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            let t = std::time::Instant::now();
            for (x, y) in xs.chunks_exact(8).zip(ys.chunks_exact_mut(8)) {
                let mut buf = [0.0f32; 24];
                buf[..8].copy_from_slice(std::hint::black_box(x));
                buf[8..16].fill(1.5);
                let p = buf.as_mut_ptr();
                // SAFETY: 8 lanes each, out (p + 16) apart from the operands.
                unsafe { f(p, p.add(8), p.add(16), 8) };
                y.copy_from_slice(&buf[16..]);
            }
            best = best.min(t.elapsed().as_nanos() as f64 / n as f64);
        }
        println!("{name}: {best:.2} ns/lane streamed");
    }
}

/// Every length the drivers split differently (blocks of 8, a half block of 4, single
/// lanes): block lanes match the same lanes of a long call bit for bit, single lanes
/// are the scalar function's; a hard lane (NaN, huge) in each position is fixed.
#[test]
fn vmath_lengths_and_tails() {
    let mut r = Rng(0x7a11);
    let mut xs: Vec<f32> = (0..16).map(|_| r.range(-20.0, 20.0)).collect();
    xs[5] = f32::NAN;
    xs[10] = 3.0e9;
    xs[13] = -0.0;
    let ys: Vec<f32> = (0..16).map(|_| r.range(-3.0, 3.0)).collect();
    let sin = entry("vsin_f32");
    let pow = entry("vpow_f32");
    let long_sin = eval1(sin, &xs);
    let mut long_pow = vec![0.0f32; 16];
    // SAFETY: xs, ys and long_pow hold 16 lanes.
    unsafe { pow(xs.as_ptr(), ys.as_ptr(), long_pow.as_mut_ptr(), 16) };
    let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    for n in 1..=16 {
        let got_sin = eval1(sin, &xs[..n]);
        let mut got_pow = vec![0.0f32; n];
        // SAFETY: n lanes each.
        unsafe { pow(xs.as_ptr(), ys.as_ptr(), got_pow.as_mut_ptr(), n) };
        let blocks = n - n % 4;
        for i in 0..n {
            let (ws, wp) = if i < blocks {
                (long_sin[i], long_pow[i])
            } else {
                (trig::Sin::slow(xs[i]), explog::Pow::slow(xs[i], ys[i]))
            };
            assert!(
                same(got_sin[i], ws),
                "sin n={n} lane {i}: {} vs {ws}",
                got_sin[i]
            );
            assert!(
                same(got_pow[i], wp),
                "pow n={n} lane {i}: {} vs {wp}",
                got_pow[i]
            );
        }
    }
}
