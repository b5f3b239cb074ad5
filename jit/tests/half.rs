//! `half` (cl_khr_fp16) values in kernels: arithmetic, comparisons, classification,
//! conversions to and from every type with every rounding mode, math built-ins and
//! vectors, checked against a host reference that rounds exactly once.

mod common;
use common::*;

/// The value of half bits `h`.
fn hval(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let mant = f64::from(h & 0x3ff);
    match exp {
        0 => sign * mant * 2f64.powi(-24),
        31 if mant == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        _ => sign * (1024.0 + mant) * 2f64.powi(exp - 25),
    }
}

/// Rounding modes of the reference.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Rte,
    Rtz,
    Rtp,
    Rtn,
}

/// `x` rounded to half bits in `mode` (x must be exactly the value to round).
fn to_half(x: f64, mode: Mode) -> u16 {
    if x.is_nan() {
        return 0x7e00;
    }
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    let neg = sign != 0;
    let up = |m: Mode| match m {
        Mode::Rtp => !neg,
        Mode::Rtn => neg,
        _ => false,
    };
    let overflow = if mode == Mode::Rte || up(mode) {
        0x7c00
    } else {
        0x7bff
    };
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    // Every half in increasing order of magnitude: find the neighbours of a.
    let mut lo = 0u16;
    let mut hi = 0x7c00u16;
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if hval(mid) <= a {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if hval(lo) == a {
        return sign | lo;
    }
    if a > 65504.0 {
        // Between the largest half and infinity: RTE overflows from 65520 on.
        return match mode {
            Mode::Rte if a < 65520.0 => sign | 0x7bff,
            _ => sign | overflow,
        };
    }
    let pick = match mode {
        Mode::Rtz => lo,
        Mode::Rtp | Mode::Rtn => {
            if up(mode) {
                hi
            } else {
                lo
            }
        }
        Mode::Rte => {
            let (dl, dh) = (a - hval(lo), hval(hi) - a);
            if dl < dh || (dl == dh && lo & 1 == 0) {
                lo
            } else {
                hi
            }
        }
    };
    sign | pick
}

/// Deterministic pseudo-random half bits (every class, NaNs included).
fn halves(n: usize, seed: u32) -> Vec<u16> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s & 0xffff) as u16
        })
        .collect()
}

fn same(got: u16, want: u16) -> bool {
    got == want || (hval(got).is_nan() && hval(want).is_nan())
}

#[test]
fn arithmetic_rounds_once() {
    let src = r#"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void k(global const half* a, global const half* b, global half* o, global int* c) {
  size_t i = get_global_id(0);
  half x = a[i], y = b[i];
  o[8*i+0] = x + y;
  o[8*i+1] = x - y;
  o[8*i+2] = x * y;
  o[8*i+3] = x / y;
  o[8*i+4] = -x;
  o[8*i+5] = sqrt(x);
  o[8*i+6] = fma(x, y, (half)0.75h);
  o[8*i+7] = fabs(x);
  c[i] = (x < y) | (x == y) << 1 | (x >= y) << 2 | isnan(x) << 3 | isinf(x) << 4
       | isnormal(x) << 5 | signbit(x) << 6 | isfinite(x) << 7 | (x != y) << 8;
}
"#;
    let n = 65536;
    // Every half as `a`, paired with a random `b`.
    let mut a: Vec<u16> = (0..=0xffffu16).collect();
    let mut b = halves(n, 7);
    for w in [4, 8, 32] {
        let p = build_w(src, w);
        let mut o = vec![0u16; 8 * n];
        let mut c = vec![0i32; n];
        run(
            kernel(&p, "k"),
            &[n],
            &[64],
            &[buf(&mut a), buf(&mut b), buf(&mut o), buf(&mut c)],
        );
        for i in 0..n {
            let (x, y) = (hval(a[i]), hval(b[i]));
            let want = [
                to_half(x + y, Mode::Rte),
                to_half(x - y, Mode::Rte),
                to_half(x * y, Mode::Rte),
                to_half(x / y, Mode::Rte),
                a[i] ^ 0x8000,
                to_half(x.sqrt(), Mode::Rte),
                to_half(x.mul_add(y, 0.75), Mode::Rte),
                a[i] & 0x7fff,
            ];
            for (k, wv) in want.iter().enumerate() {
                assert!(
                    same(o[8 * i + k], *wv),
                    "W={w} op {k} on {:#06x}, {:#06x}: got {:#06x} want {wv:#06x}",
                    a[i],
                    b[i],
                    o[8 * i + k]
                );
            }
            let bits = [
                x < y,
                x == y,
                x >= y,
                x.is_nan(),
                x.is_infinite(),
                a[i] & 0x7c00 != 0 && a[i] & 0x7c00 != 0x7c00,
                a[i] & 0x8000 != 0,
                x.is_finite(),
                x != y,
            ];
            let want_c = bits
                .iter()
                .enumerate()
                .fold(0, |acc, (k, b)| acc | (i32::from(*b) << k));
            assert_eq!(
                c[i], want_c,
                "W={w} relations of {:#06x}, {:#06x}",
                a[i], b[i]
            );
        }
    }
}

#[test]
fn conversions_with_rounding_modes() {
    let src = r#"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void k(global const float* f, global const double* d, global const int* i32,
              global const long* i64, global const half* h, global half* o,
              global int* oi, global double* od, global uchar* ou) {
  size_t i = get_global_id(0);
  o[12*i+0] = convert_half(f[i]);
  o[12*i+1] = convert_half_rtz(f[i]);
  o[12*i+2] = convert_half_rtp(f[i]);
  o[12*i+3] = convert_half_rtn(f[i]);
  o[12*i+4] = convert_half(d[i]);
  o[12*i+5] = convert_half_rtz(d[i]);
  o[12*i+6] = convert_half_rtp(d[i]);
  o[12*i+7] = convert_half_rtn(d[i]);
  o[12*i+8] = convert_half(i32[i]);
  o[12*i+9] = convert_half_rtz(i32[i]);
  o[12*i+10] = convert_half_rtp(i64[i]);
  o[12*i+11] = (half)i64[i];
  oi[2*i+0] = convert_int_sat_rte(h[i]);
  oi[2*i+1] = convert_int(h[i]);
  od[i] = convert_double(h[i]);
  ou[i] = convert_uchar_sat(h[i]);
}
"#;
    let n = 4096;
    let r = halves(4 * n, 99);
    // Floats spread over the half range and beyond, doubles with bits below f32.
    let mut f: Vec<f32> = (0..n)
        .map(|k| {
            let e = (r[k] % 40) as i32 - 26;
            let m = 1.0 + f32::from(r[n + k]) / 65536.0;
            let s = if r[2 * n + k] & 1 == 0 { 1.0 } else { -1.0 };
            s * m * 2f32.powi(e)
        })
        .collect();
    let mut d: Vec<f64> = f
        .iter()
        .enumerate()
        .map(|(k, x)| f64::from(*x) * (1.0 + f64::from(r[3 * n + k]) * 2f64.powi(-40)))
        .collect();
    let mut i32v: Vec<i32> = (0..n)
        .map(|k| ((u32::from(r[k]) << 16 | u32::from(r[n + k])) as i32) >> (r[2 * n + k] % 20))
        .collect();
    let mut i64v: Vec<i64> = i32v
        .iter()
        .enumerate()
        .map(|(k, x)| i64::from(*x) << (r[3 * n + k] % 40))
        .collect();
    let mut h = halves(n, 5);
    for w in [8, 16] {
        let p = build_w(src, w);
        let mut o = vec![0u16; 12 * n];
        let mut oi = vec![0i32; 2 * n];
        let mut od = vec![0f64; n];
        let mut ou = vec![0u8; n];
        run(
            kernel(&p, "k"),
            &[n],
            &[32],
            &[
                buf(&mut f),
                buf(&mut d),
                buf(&mut i32v),
                buf(&mut i64v),
                buf(&mut h),
                buf(&mut o),
                buf(&mut oi),
                buf(&mut od),
                buf(&mut ou),
            ],
        );
        for k in 0..n {
            let modes = [Mode::Rte, Mode::Rtz, Mode::Rtp, Mode::Rtn];
            let mut want = Vec::new();
            for m in modes {
                want.push(to_half(f64::from(f[k]), m));
            }
            for m in modes {
                want.push(to_half(d[k], m));
            }
            want.push(to_half(f64::from(i32v[k]), Mode::Rte));
            want.push(to_half(f64::from(i32v[k]), Mode::Rtz));
            // i64 -> f64 may round, but only for |x| > 2^53, far beyond half's range.
            want.push(to_half(i64v[k] as f64, Mode::Rtp));
            want.push(to_half(i64v[k] as f64, Mode::Rte));
            for (j, wv) in want.iter().enumerate() {
                assert_eq!(
                    o[12 * k + j],
                    *wv,
                    "W={w} conversion {j} of element {k} (f {} d {} i {} l {})",
                    f[k],
                    d[k],
                    i32v[k],
                    i64v[k]
                );
            }
            let x = hval(h[k]);
            let sat = |v: f64| -> i32 {
                if v.is_nan() {
                    0
                } else {
                    v.clamp(i32::MIN as f64, i32::MAX as f64) as i32
                }
            };
            assert_eq!(oi[2 * k], sat(x.round_ties_even()), "rte of {x}");
            assert_eq!(oi[2 * k + 1], sat(x.trunc()), "rtz of {x}");
            assert!(od[k] == x || (x.is_nan() && od[k].is_nan()), "{x}");
            let want_u = if x.is_nan() {
                0
            } else {
                x.trunc().clamp(0.0, 255.0) as u8
            };
            assert_eq!(ou[k], want_u, "uchar_sat of {x}");
        }
    }
}

#[test]
fn math_and_vectors() {
    let src = r#"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void k(global const half4* a, global const half4* b, global half4* o, global half* s,
              global int* e) {
  size_t i = get_global_id(0);
  half4 x = a[i], y = b[i];
  o[6*i+0] = fmin(x, y);
  o[6*i+1] = exp(x * (half)0.125h);
  o[6*i+2] = select(x, y, isless(x, y));
  o[6*i+3] = nextafter(x, y);
  half4 ip;
  o[6*i+4] = fract(x, &ip);
  o[6*i+5] = ip;
  s[3*i] = dot(x, y);
  s[3*i+1] = length(x.xy);
  int4 ex;
  half4 m = frexp(x, &ex);
  s[3*i+2] = m.y;
  e[i] = ex.y;
}
"#;
    let n = 2048;
    let mut a = halves(4 * n, 3);
    let mut b = halves(4 * n, 4);
    let p = build(src);
    let mut o = vec![0u16; 24 * n];
    let mut s = vec![0u16; 3 * n];
    let mut e = vec![0i32; n];
    run(
        kernel(&p, "k"),
        &[n],
        &[16],
        &[
            buf(&mut a),
            buf(&mut b),
            buf(&mut o),
            buf(&mut s),
            buf(&mut e),
        ],
    );
    let ulps = |got: u16, want: f64| -> f64 {
        let g = hval(got);
        if same(got, to_half(want, Mode::Rte)) {
            return 0.0;
        }
        let r = hval(to_half(want, Mode::Rte));
        let q = if r.abs() < 2f64.powi(-14) {
            2f64.powi(-24)
        } else {
            2f64.powi(r.abs().log2().floor() as i32 - 10)
        };
        (g - want).abs() / q
    };
    for k in 0..n {
        for c in 0..4 {
            let (x, y) = (hval(a[4 * k + c]), hval(b[4 * k + c]));
            let (ha, hb) = (a[4 * k + c], b[4 * k + c]);
            let at = |j: usize| o[(6 * k + j) * 4 + c];
            let fmin = if x.is_nan() {
                hb
            } else if y.is_nan() || x < y || (x == y && ha & 0x8000 != 0) {
                ha
            } else {
                hb
            };
            assert!(same(at(0), fmin), "fmin {ha:#06x} {hb:#06x}");
            let ex = hval(to_half(x * 0.125, Mode::Rte)).exp();
            assert!(ulps(at(1), ex) <= 2.0, "exp({x}/8) = {}", hval(at(1)));
            assert_eq!(at(2), if x < y { hb } else { ha }, "select");
            let next = if x.is_nan() || y.is_nan() {
                0x7e00
            } else if x == y {
                hb
            } else if x == 0.0 {
                if y > 0.0 {
                    1
                } else {
                    0x8001
                }
            } else if (y > x) == (x > 0.0) {
                ha + 1
            } else {
                ha - 1
            };
            assert!(same(at(3), next), "nextafter {ha:#06x} {hb:#06x}");
            if x.is_finite() {
                let fl = x.floor();
                assert_eq!(hval(at(5)), fl, "fract's floor of {x}");
                let fr = hval(to_half(x - fl, Mode::Rte)).min(1.0 - 2f64.powi(-11));
                assert_eq!(hval(at(4)), fr, "fract of {x}");
            }
        }
        let xs: Vec<f64> = (0..4).map(|c| hval(a[4 * k + c])).collect();
        let ys: Vec<f64> = (0..4).map(|c| hval(b[4 * k + c])).collect();
        let dot: f64 = xs.iter().zip(&ys).map(|(x, y)| x * y).sum();
        if dot.is_finite() && dot.abs() < 60000.0 {
            // OpenCL allows dot's sum in any order: a few half ulps of the largest term.
            let biggest = xs
                .iter()
                .zip(&ys)
                .map(|(x, y)| (x * y).abs())
                .fold(0.0, f64::max);
            let got = hval(s[3 * k]);
            assert!(
                (got - dot).abs() <= biggest * 2f64.powi(-9) + 2f64.powi(-24),
                "dot {xs:?} {ys:?} = {got}"
            );
        }
        let len = xs[0].hypot(xs[1]);
        if len.is_finite() && len < 60000.0 && len > 2f64.powi(-14) {
            assert!(ulps(s[3 * k + 1], len) <= 2.0, "length {xs:?}");
        }
        // frexp: x = m * 2^e with 0.5 <= |m| < 1 (m = x, e = 0 for 0, inf, NaN).
        let (m, ex) = (hval(s[3 * k + 2]), e[k]);
        let x = xs[1];
        if x.is_finite() && x != 0.0 {
            assert!((0.5..1.0).contains(&m.abs()), "frexp mantissa of {x}: {m}");
            assert_eq!(m * 2f64.powi(ex), x, "frexp of {x}");
        } else {
            assert!(same(s[3 * k + 2], a[4 * k + 1]) && ex == 0, "frexp of {x}");
        }
    }
}

#[test]
fn sub_group_and_work_group_operations_on_half() {
    let src = r#"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void k(global const half* a, global half* o) {
  size_t i = get_global_id(0);
  half x = a[i];
  o[5*i+0] = sub_group_reduce_add(x);
  o[5*i+1] = sub_group_scan_inclusive_max(x);
  o[5*i+2] = sub_group_broadcast(x, 1);
  o[5*i+3] = work_group_reduce_add(x);
  o[5*i+4] = work_group_scan_exclusive_min(x);
}
"#;
    let (n, l) = (256, 64);
    // Multiples of 1/8 below 64: every partial sum is exact in f32.
    let mut a: Vec<u16> = (0..n)
        .map(|k| to_half(((k * 37) % 512) as f64 / 8.0 - 20.0, Mode::Rte))
        .collect();
    for w in [4, 8, 16] {
        let p = build_w(src, w);
        let mut o = vec![0u16; 5 * n];
        run(kernel(&p, "k"), &[n], &[l], &[buf(&mut a), buf(&mut o)]);
        for i in 0..n {
            let sg = i / w as usize * w as usize;
            let wg = i / l * l;
            let v = |k: usize| hval(a[k]);
            let sg_sum: f64 = (sg..sg + w as usize).map(v).sum();
            let scan_max = (sg..=i).map(v).fold(f64::NEG_INFINITY, f64::max);
            let wg_sum: f64 = (wg..wg + l).map(v).sum();
            let ex_min = (wg..i).map(v).fold(f64::INFINITY, f64::min);
            let want = [
                to_half(sg_sum, Mode::Rte),
                to_half(scan_max, Mode::Rte),
                a[sg + 1],
                to_half(wg_sum, Mode::Rte),
                to_half(ex_min, Mode::Rte),
            ];
            for (j, wv) in want.iter().enumerate() {
                assert_eq!(o[5 * i + j], *wv, "W={w} op {j} item {i}");
            }
        }
    }
}
