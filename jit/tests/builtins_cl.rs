//! OpenCL.std built-ins through the code generator: vector loads/stores, half
//! conversions, select/bitselect, inline math and library calls, integer helpers.

mod common;
use common::*;

#[test]
fn vload_vstore_and_half() {
    let src = r#"
kernel void k(global const float* a, global float* b, global const half* h, global half* ho, global float* hf) {
  size_t i = get_global_id(0);
  float4 v = vload4(i, a);
  vstore4(v.wzyx * 2.0f, i, b);
  float x = vload_half(i, h);
  hf[i] = x;
  vstore_half_rtz(x * 3.0f + 0.1f, i, ho);
  float2 y = vload_half2(i, h);
  hf[64 + i] = y.x - y.y;
}
"#;
    let p = build(src);
    let k = kernel(&p, "k");
    let n = 32;
    let mut a: Vec<f32> = (0..4 * n + 4).map(|x| x as f32 * 0.5).collect();
    let mut b = vec![0f32; 4 * n];
    // Halves of small integers and fractions.
    let vals: Vec<f32> = (0..2 * n + 2).map(|x| x as f32 * 0.25 - 3.0).collect();
    let mut h: Vec<u16> = vals.iter().map(|v| half_bits(*v)).collect();
    let mut ho = vec![0u16; n];
    let mut hf = vec![0f32; 128];
    run(
        k,
        &[n],
        &[8],
        &[
            buf(&mut a),
            buf(&mut b),
            buf(&mut h),
            buf(&mut ho),
            buf(&mut hf),
        ],
    );
    for i in 0..n {
        for c in 0..4 {
            assert_eq!(b[4 * i + c], a[4 * i + 3 - c] * 2.0);
        }
        assert_eq!(hf[i], vals[i], "vload_half {i}");
        assert_eq!(hf[64 + i], vals[2 * i] - vals[2 * i + 1], "vload_half2 {i}");
        let want = vals[i] * 3.0 + 0.1;
        let got = half_value(ho[i]);
        // rtz: |got| <= |want| and within one half ulp step.
        assert!(
            got.abs() <= want.abs() && (want - got).abs() <= want.abs() / 512.0 + 1e-3,
            "vstore_half_rtz {i}: {want} -> {got}"
        );
    }
}

fn half_bits(v: f32) -> u16 {
    // Exact for the test values (multiples of 0.25 in [-3, 30]).
    let b = v.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    if v == 0.0 {
        return sign;
    }
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    let man = ((b >> 13) & 0x3ff) as u16;
    sign | ((exp as u16) << 10) | man
}

fn half_value(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let man = (h & 0x3ff) as f32;
    if exp == 0 {
        sign * man * 2f32.powi(-24)
    } else {
        sign * (1.0 + man / 1024.0) * 2f32.powi(exp - 15)
    }
}

#[test]
fn math_and_integer_builtins() {
    let src = r#"
kernel void k(global const float* x, global float* f, global const int* a, global int* r) {
  size_t i = get_global_id(0);
  float v = x[i];
  f[8*i+0] = fmin(v, 2.0f) + fmax(v, NAN);
  f[8*i+1] = sqrt(fabs(v)) + floor(v) + ceil(v) + trunc(v) + rint(v);
  f[8*i+2] = sin(v) + exp(v * 0.1f);
  f[8*i+3] = pow(fabs(v) + 1.0f, 1.5f);
  f[8*i+4] = select(v, -v, (int)(v > 0.0f));
  f[8*i+5] = clamp(v, -1.0f, 1.0f) + mix(v, 2.0f, 0.25f) + step(0.5f, v);
  f[8*i+6] = fma(v, v, 1.0f) + native_recip(v + 10.0f);
  f[8*i+7] = dot((float4)(v, 1.0f, 2.0f, 3.0f), (float4)(2.0f, v, 1.0f, 0.5f)) + length((float2)(v, 1.0f));
  int y = a[i];
  r[6*i+0] = popcount(y) + clz(y) * 100;
  r[6*i+1] = max(y, 7) + min(y, -7) + abs(y) + abs_diff(y, 3);
  r[6*i+2] = add_sat(y, 0x7ffffff0) ;
  r[6*i+3] = mul_hi(y, 0x12345678) + mad24(y, 3, 1) + rotate(y, 5);
  r[6*i+4] = bitselect(y, 0x0f0f0f0f, 0x00ff00ff) + clamp(y, -50, 50);
  r[6*i+5] = hadd(y, 1001) + upsample((short)1, (ushort)y);
}
"#;
    let p = build(src);
    let k = kernel(&p, "k");
    let n = 24;
    let mut x: Vec<f32> = (0..n).map(|i| i as f32 * 0.37 - 4.1).collect();
    let mut f = vec![0f32; 8 * n];
    let mut a: Vec<i32> = (0..n as i32).map(|i| i * 12345 - 140000).collect();
    let mut r = vec![0i32; 6 * n];
    run(
        k,
        &[n],
        &[8],
        &[buf(&mut x), buf(&mut f), buf(&mut a), buf(&mut r)],
    );
    let close = |got: f32, want: f32, what: &str| {
        assert!(
            (got - want).abs() <= 1e-5 * want.abs().max(1.0),
            "{what}: got {got}, want {want}"
        );
    };
    for i in 0..n {
        let v = x[i];
        close(f[8 * i], v.min(2.0) + v, &format!("fmin/fmax {i}"));
        close(
            f[8 * i + 1],
            v.abs().sqrt() + v.floor() + v.ceil() + v.trunc() + v.round_ties_even(),
            &format!("rounding {i}"),
        );
        close(
            f[8 * i + 2],
            v.sin() + (v * 0.1).exp(),
            &format!("sin/exp {i}"),
        );
        close(f[8 * i + 3], (v.abs() + 1.0).powf(1.5), &format!("pow {i}"));
        assert_eq!(f[8 * i + 4], if v > 0.0 { -v } else { v }, "select {i}");
        close(
            f[8 * i + 5],
            v.clamp(-1.0, 1.0) + (v + (2.0 - v) * 0.25) + if v < 0.5 { 0.0 } else { 1.0 },
            &format!("clamp/mix/step {i}"),
        );
        close(
            f[8 * i + 6],
            v.mul_add(v, 1.0) + 1.0 / (v + 10.0),
            &format!("fma/recip {i}"),
        );
        close(
            f[8 * i + 7],
            2.0 * v + v + 2.0 + 1.5 + (v * v + 1.0).sqrt(),
            &format!("dot/length {i}"),
        );
        let y = a[i];
        assert_eq!(
            r[6 * i],
            y.count_ones() as i32 + y.leading_zeros() as i32 * 100,
            "popcount/clz {i}"
        );
        assert_eq!(
            r[6 * i + 1],
            y.max(7) + y.min(-7) + y.wrapping_abs() + (y - 3).unsigned_abs() as i32,
            "minmax/abs {i}"
        );
        assert_eq!(r[6 * i + 2], y.saturating_add(0x7ffffff0), "add_sat {i}");
        let mul_hi = ((y as i64 * 0x12345678i64) >> 32) as i32;
        let mad24 = ((y << 8) >> 8) * 3 + 1;
        assert_eq!(
            r[6 * i + 3],
            mul_hi.wrapping_add(mad24).wrapping_add(y.rotate_left(5)),
            "mul_hi/mad24/rotate {i}"
        );
        let bs = (y & !0x00ff00ff) | (0x0f0f0f0f & 0x00ff00ff);
        assert_eq!(
            r[6 * i + 4],
            bs.wrapping_add(y.clamp(-50, 50)),
            "bitselect/clamp {i}"
        );
        let hadd = ((y as i64 + 1001) >> 1) as i32;
        let up = (1i32 << 16) | (y as u16 as i32);
        assert_eq!(r[6 * i + 5], hadd.wrapping_add(up), "hadd/upsample {i}");
    }
}

#[test]
fn any_all_test_sign_bits_of_integer_vectors() {
    let src = r#"
kernel void k(global const char* c, global const short4* s, global const int3* i,
              global const long2* l, global int* o) {
  size_t g = get_global_id(0);
  o[g] = any(c[g]) | all(c[g]) << 1 | any(s[g]) << 2 | all(s[g]) << 3
       | any(i[g]) << 4 | all(i[g]) << 5 | any(l[g]) << 6 | all(l[g]) << 7;
}
"#;
    let n = 64;
    let mut seed = 77u32;
    let mut next = || {
        seed = seed.wrapping_mul(1664525).wrapping_add(1013904223);
        // Mostly positive values with a sign bit set now and then.
        if seed >> 29 == 0 {
            (seed | 0x8000_0000) as i32
        } else {
            (seed >> 1) as i32
        }
    };
    let mut c: Vec<i8> = (0..n).map(|_| (next() >> 24) as i8).collect();
    let mut s: Vec<i16> = (0..4 * n).map(|_| (next() >> 16) as i16).collect();
    // int3 is laid out like int4.
    let mut i: Vec<i32> = (0..4 * n).map(|_| next()).collect();
    let mut l: Vec<i64> = (0..2 * n).map(|_| i64::from(next()) << 32).collect();
    for w in [4, 8, 16] {
        let p = build_w(src, w);
        let mut o = vec![0i32; n];
        run(
            kernel(&p, "k"),
            &[n],
            &[16],
            &[
                buf(&mut c),
                buf(&mut s),
                buf(&mut i),
                buf(&mut l),
                buf(&mut o),
            ],
        );
        for g in 0..n {
            let neg_s: Vec<bool> = s[4 * g..4 * g + 4].iter().map(|x| *x < 0).collect();
            let neg_i: Vec<bool> = i[4 * g..4 * g + 3].iter().map(|x| *x < 0).collect();
            let neg_l: Vec<bool> = l[2 * g..2 * g + 2].iter().map(|x| *x < 0).collect();
            let bits = [
                c[g] < 0,
                c[g] < 0,
                neg_s.iter().any(|x| *x),
                neg_s.iter().all(|x| *x),
                neg_i.iter().any(|x| *x),
                neg_i.iter().all(|x| *x),
                neg_l.iter().any(|x| *x),
                neg_l.iter().all(|x| *x),
            ];
            let want = bits
                .iter()
                .enumerate()
                .fold(0, |acc, (k, b)| acc | (i32::from(*b) << k));
            assert_eq!(o[g], want, "W={w} item {g}");
        }
    }
}

#[test]
fn conversions_clang_leaves_as_calls() {
    // clang-22 emits convert_double*/convert_half* as calls to imported functions.
    let src = r#"
kernel void k(global const float4* f, global const ulong* u, global const int* i,
              global double4* d, global double* du, global float* fi) {
  size_t g = get_global_id(0);
  d[g] = convert_double4(f[g]);
  du[2*g] = convert_double_rtz(u[g]);
  du[2*g+1] = convert_double_rtp(u[g]);
  fi[g] = convert_float(convert_double(i[g]));
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  read_mem_fence(CLK_LOCAL_MEM_FENCE);
  write_mem_fence(CLK_GLOBAL_MEM_FENCE);
}
"#;
    let n = 32;
    let mut f: Vec<f32> = (0..4 * n).map(|x| (x as f32 - 60.0) / 7.0).collect();
    let mut u: Vec<u64> = (0..n as u64)
        .map(|x| u64::MAX - x * 0x1234_5678_9abc)
        .collect();
    let mut i: Vec<i32> = (0..n as i32).map(|x| x * 1_000_003 - 7).collect();
    let mut d = vec![0f64; 4 * n];
    let mut du = vec![0f64; 2 * n];
    let mut fi = vec![0f32; n];
    let p = build(src);
    run(
        kernel(&p, "k"),
        &[n],
        &[8],
        &[
            buf(&mut f),
            buf(&mut u),
            buf(&mut i),
            buf(&mut d),
            buf(&mut du),
            buf(&mut fi),
        ],
    );
    for g in 0..n {
        for c in 0..4 {
            assert_eq!(d[4 * g + c], f64::from(f[4 * g + c]));
        }
        // Directed roundings of a 64-bit integer bracket it by adjacent doubles.
        let (lo, hi) = (du[2 * g], du[2 * g + 1]);
        assert!(
            lo as u128 <= u128::from(u[g]) && u128::from(u[g]) <= hi as u128,
            "{} -> {lo} {hi}",
            u[g]
        );
        assert!(
            hi == lo || f64::from_bits(lo.to_bits() + 1) == hi,
            "{lo} {hi}"
        );
        assert_eq!(fi[g], i[g] as f32);
    }
}

#[test]
fn narrow_selects_follow_each_lane() {
    // Per-lane conditions choosing between char, short and half values.
    let src = r#"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void k(global const char* a, global const char* b, global const short* s,
              global const short* t, global const half* h, global const half* g,
              global char* oc, global short* os, global half* oh) {
  size_t i = get_global_id(0);
  oc[i] = a[i] < b[i] ? a[i] : b[i];
  os[i] = s[i] > t[i] ? s[i] : t[i];
  oh[i] = (i & 3) == 1 ? h[i] : g[i];
}
"#;
    let n = 96;
    let mut a: Vec<i8> = (0..n).map(|x| ((x * 37) % 256) as i8).collect();
    let mut b: Vec<i8> = (0..n).map(|x| ((x * 91 + 5) % 256) as i8).collect();
    let mut s: Vec<i16> = (0..n).map(|x| (x as i16).wrapping_mul(1237)).collect();
    let mut t: Vec<i16> = (0..n).map(|x| (x as i16).wrapping_mul(-911)).collect();
    let mut h: Vec<u16> = (0..n).map(|x| 0x3c00 + x as u16).collect();
    let mut g: Vec<u16> = (0..n).map(|x| 0xc000 + x as u16).collect();
    for w in [4, 8, 16, 32] {
        let p = build_w(src, w);
        let (mut oc, mut os, mut oh) = (vec![0i8; n], vec![0i16; n], vec![0u16; n]);
        run(
            kernel(&p, "k"),
            &[n],
            &[32],
            &[
                buf(&mut a),
                buf(&mut b),
                buf(&mut s),
                buf(&mut t),
                buf(&mut h),
                buf(&mut g),
                buf(&mut oc),
                buf(&mut os),
                buf(&mut oh),
            ],
        );
        for i in 0..n {
            assert_eq!(oc[i], a[i].min(b[i]), "W={w} char {i}");
            assert_eq!(os[i], s[i].max(t[i]), "W={w} short {i}");
            assert_eq!(
                oh[i],
                if i & 3 == 1 { h[i] } else { g[i] },
                "W={w} half {i}"
            );
        }
    }
}
