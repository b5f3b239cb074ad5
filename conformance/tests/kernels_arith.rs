//! Arithmetic in kernels, compared with host references: every integer width (i8..i64,
//! signed and unsigned), f32 and f64 (exact where IEEE demands, ULP bounds where the
//! OpenCL spec allows them), a true fused `fma`, comparisons, `select`, conversions
//! (rounding modes, saturation, widening/narrowing) and OpenCL vector types.

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

/// An OpenCL integer type: C name, unsigned twin, bits, signedness.
#[derive(Clone, Copy, Debug)]
struct IntType {
    name: &'static str,
    unsigned: &'static str,
    bits: u32,
    signed: bool,
}

const INT_TYPES: [IntType; 8] = [
    IntType {
        name: "char",
        unsigned: "uchar",
        bits: 8,
        signed: true,
    },
    IntType {
        name: "uchar",
        unsigned: "uchar",
        bits: 8,
        signed: false,
    },
    IntType {
        name: "short",
        unsigned: "ushort",
        bits: 16,
        signed: true,
    },
    IntType {
        name: "ushort",
        unsigned: "ushort",
        bits: 16,
        signed: false,
    },
    IntType {
        name: "int",
        unsigned: "uint",
        bits: 32,
        signed: true,
    },
    IntType {
        name: "uint",
        unsigned: "uint",
        bits: 32,
        signed: false,
    },
    IntType {
        name: "long",
        unsigned: "ulong",
        bits: 64,
        signed: true,
    },
    IntType {
        name: "ulong",
        unsigned: "ulong",
        bits: 64,
        signed: false,
    },
];

impl IntType {
    /// Wraps an exact value to this type's range (two's complement).
    fn wrap(&self, v: i128) -> i128 {
        let m = 1i128 << self.bits;
        let u = v.rem_euclid(m);
        if self.signed && u >= m / 2 {
            u - m
        } else {
            u
        }
    }

    fn min(&self) -> i128 {
        if self.signed {
            -(1i128 << (self.bits - 1))
        } else {
            0
        }
    }

    fn encode(&self, values: &[i128]) -> Vec<u8> {
        let n = (self.bits / 8) as usize;
        values
            .iter()
            .flat_map(|v| v.to_le_bytes()[..n].to_vec())
            .collect()
    }

    fn decode(&self, bytes: &[u8]) -> Vec<i128> {
        let n = (self.bits / 8) as usize;
        bytes
            .chunks(n)
            .map(|c| {
                let mut full = [0u8; 16];
                full[..n].copy_from_slice(c);
                self.wrap(i128::from_le_bytes(full))
            })
            .collect()
    }
}

const INT_OPS: usize = 16;

fn int_kernel(t: IntType) -> String {
    format!(
        r#"
typedef {t} T;
typedef {u} U;
kernel void ops(global const T* a, global const T* b, global T* o) {{
    size_t i = get_global_id(0);
    T x = a[i], y = b[i];
    T s = y & (T)({bits} - 1);
    global T* r = o + i * {INT_OPS};
    r[0] = (T)((U)x + (U)y);
    r[1] = (T)((U)x - (U)y);
    r[2] = (T)((U)x * (U)y);
    r[3] = x / y;
    r[4] = x % y;
    r[5] = x & y;
    r[6] = x | y;
    r[7] = x ^ y;
    r[8] = ~x;
    r[9] = (T)((U)x << s);
    r[10] = x >> s;
    r[11] = (T)(x < y);
    r[12] = (T)(x == y);
    r[13] = min(x, y);
    r[14] = max(x, y);
    r[15] = (x & 1) ? y : x;
}}
"#,
        t = t.name,
        u = t.unsigned,
        bits = t.bits
    )
}

fn int_reference(t: IntType, x: i128, y: i128) -> [i128; INT_OPS] {
    let s = (y & (t.bits as i128 - 1)) as u32;
    let w = |v| t.wrap(v);
    // Logical/arithmetic right shift: x is already in range; for unsigned it is >= 0.
    [
        w(x + y),
        w(x - y),
        w(x.wrapping_mul(y)),
        w(x / y),
        w(x % y),
        w(x & y),
        w(x | y),
        w(x ^ y),
        w(!x),
        w(x << s),
        w(x >> s),
        (x < y) as i128,
        (x == y) as i128,
        x.min(y),
        x.max(y),
        if x & 1 != 0 { y } else { x },
    ]
}

#[test]
fn integer_arithmetic_every_width() {
    let ctx = DeviceContext::new();
    let mut rng = TestRng::new(0x1234);
    let n = 256;
    for t in INT_TYPES {
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        for k in 0..n {
            let mut x = t.wrap(rng.next_u64() as i128);
            let mut y = t.wrap(rng.next_u64() as i128);
            // Edge values in the first lanes.
            match k {
                0 => x = t.min(),
                1 => x = t.wrap(-1),
                2 => (x, y) = (t.wrap(i128::MAX), 1),
                3 => y = x,
                4 => y = t.wrap(7),
                _ => {}
            }
            if y == 0 || (t.signed && x == t.min() && y == -1) {
                y = 3;
            }
            xs.push(x);
            ys.push(y);
        }
        let a = ctx.buffer_from(&t.encode(&xs));
        let b = ctx.buffer_from(&t.encode(&ys));
        let o = ctx.buffer_zeroed::<u8>(n * INT_OPS * (t.bits as usize / 8));
        run_with_buffers(&ctx, &int_kernel(t), "", "ops", &[&a, &b, &o], &[n], None);
        let got = t.decode(&ctx.read::<u8>(&o, n * INT_OPS * (t.bits as usize / 8)));
        for k in 0..n {
            let want = int_reference(t, xs[k], ys[k]);
            for op in 0..INT_OPS {
                assert_eq!(
                    got[k * INT_OPS + op],
                    want[op],
                    "{}: op {op} with x={} y={}",
                    t.name,
                    xs[k],
                    ys[k]
                );
            }
        }
    }
}

const F32_OPS: usize = 14;

#[test]
fn float_arithmetic_exact_ops() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void ops(global const float* a, global const float* b, global float* o) {
    size_t i = get_global_id(0);
    float x = a[i], y = b[i];
    global float* r = o + i * 14;
    r[0] = x + y;
    r[1] = x - y;
    r[2] = x * y;
    r[3] = fmin(x, y);
    r[4] = fmax(x, y);
    r[5] = fabs(x);
    r[6] = floor(x);
    r[7] = ceil(x);
    r[8] = trunc(x);
    r[9] = round(x);
    r[10] = rint(x);
    r[11] = copysign(x, y);
    r[12] = -x;
    r[13] = fma(x, y, x);
}
"#;
    let mut rng = TestRng::new(99);
    let mut xs: Vec<f32> = rng.vec(512, |r| r.f32_in(-1000.0, 1000.0));
    let mut ys: Vec<f32> = rng.vec(512, |r| r.f32_in(-10.0, 10.0));
    let specials = [
        0.5f32,
        -0.5,
        1.5,
        2.5,
        -2.5,
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e-40,
        f32::MAX,
        3.0,
    ];
    for (k, s) in specials.iter().enumerate() {
        xs[k] = *s;
        ys[k + 20] = *s;
    }
    let n = xs.len();
    let a = ctx.buffer_from(&xs);
    let b = ctx.buffer_from(&ys);
    let o = ctx.buffer_zeroed::<f32>(n * F32_OPS);
    run_with_buffers(&ctx, src, "", "ops", &[&a, &b, &o], &[n], None);
    let got: Vec<f32> = ctx.read(&o, n * F32_OPS);
    let denorms = device_info::<cl_ulong>(ctx.device, CL_DEVICE_SINGLE_FP_CONFIG).unwrap()
        & CL_FP_DENORM
        != 0;
    for k in 0..n {
        let (x, y) = (xs[k], ys[k]);
        let want = [
            x + y,
            x - y,
            x * y,
            x.min(y),
            x.max(y),
            x.abs(),
            x.floor(),
            x.ceil(),
            x.trunc(),
            x.round(),
            x.round_ties_even(),
            x.copysign(y),
            -x,
            x.mul_add(y, x),
        ];
        for op in 0..F32_OPS {
            let g = got[k * F32_OPS + op];
            let ok = g.to_bits() == want[op].to_bits()
                || (g.is_nan() && want[op].is_nan())
                || (!denorms
                    && (want[op].abs() < f32::MIN_POSITIVE || x.abs() < f32::MIN_POSITIVE)
                    && g.abs() <= f32::MIN_POSITIVE)
                || (op == 3 || op == 4) && g == want[op];
            assert!(
                ok,
                "float op {op} with x={x:e} y={y:e}: got {g:e}, want {:e}",
                want[op]
            );
        }
    }
}

#[test]
fn float_division_and_sqrt_within_ulp_limits() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void ops(global const float* a, global const float* b, global float* o) {
    size_t i = get_global_id(0);
    o[2 * i] = a[i] / b[i];
    o[2 * i + 1] = sqrt(fabs(a[i]));
}
"#;
    let mut rng = TestRng::new(5);
    let xs: Vec<f32> = rng.vec(1024, |r| r.f32_in(-1e6, 1e6));
    let ys: Vec<f32> = rng.vec(1024, |r| r.f32_in(0.001, 1e3));
    let a = ctx.buffer_from(&xs);
    let b = ctx.buffer_from(&ys);
    let o = ctx.buffer_zeroed::<f32>(2048);
    run_with_buffers(&ctx, src, "", "ops", &[&a, &b, &o], &[1024], None);
    let got: Vec<f32> = ctx.read(&o, 2048);
    for k in 0..1024 {
        let d = ulp_distance_f32(got[2 * k], xs[k] / ys[k]);
        assert!(d <= 3, "{} / {} = {} ({d} ulp)", xs[k], ys[k], got[2 * k]);
        let d = ulp_distance_f32(got[2 * k + 1], xs[k].abs().sqrt());
        assert!(
            d <= 3,
            "sqrt({}) = {} ({d} ulp)",
            xs[k].abs(),
            got[2 * k + 1]
        );
    }
}

#[test]
fn fma_is_fused() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global const float* a, global float* o, global const double* da, global double* od) {
    o[0] = fma(a[0], a[1], a[2]);
    od[0] = fma(da[0], da[1], da[2]);
}
"#;
    // (1 + 2^-23)(1 - 2^-23) - 1 = -2^-46 exactly; unfused it rounds to 0.
    let e = f32::EPSILON;
    let input = [1.0 + e, 1.0 - e, -1.0f32];
    let de = f64::EPSILON;
    let dinput = [1.0 + de, 1.0 - de, -1.0f64];
    let has_fp64 = ctx.has_extension("cl_khr_fp64");
    if !require(has_fp64, "cl_khr_fp64") {
        return;
    }
    let a = ctx.buffer_from(&input);
    let o = ctx.buffer_zeroed::<f32>(1);
    let da = ctx.buffer_from(&dinput);
    let od = ctx.buffer_zeroed::<f64>(1);
    run_with_buffers(&ctx, src, "", "k", &[&a, &o, &da, &od], &[1], None);
    assert_eq!(
        ctx.read::<f32>(&o, 1)[0],
        -(2f32.powi(-46)),
        "f32 fma must not round the product"
    );
    assert_eq!(
        ctx.read::<f64>(&od, 1)[0],
        -(2f64.powi(-104)),
        "f64 fma must not round the product"
    );
}

#[test]
fn double_arithmetic() {
    let ctx = DeviceContext::new();
    if !require(ctx.has_extension("cl_khr_fp64"), "cl_khr_fp64") {
        return;
    }
    let src = r#"
kernel void ops(global const double* a, global const double* b, global double* o) {
    size_t i = get_global_id(0);
    double x = a[i], y = b[i];
    global double* r = o + i * 8;
    r[0] = x + y;
    r[1] = x - y;
    r[2] = x * y;
    r[3] = x / y;
    r[4] = sqrt(fabs(x));
    r[5] = floor(x);
    r[6] = fmax(x, y);
    r[7] = (double)(x < y) + 2.0 * (double)(x == y);
}
"#;
    let mut rng = TestRng::new(77);
    let xs: Vec<f64> = (0..256)
        .map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 40) as f64 - 4096.0)
        .collect();
    let mut ys: Vec<f64> = (0..256)
        .map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 45) as f64 + 0.125)
        .collect();
    ys[3] = xs[3];
    let a = ctx.buffer_from(&xs);
    let b = ctx.buffer_from(&ys);
    let o = ctx.buffer_zeroed::<f64>(256 * 8);
    run_with_buffers(&ctx, src, "", "ops", &[&a, &b, &o], &[256], None);
    let got: Vec<f64> = ctx.read(&o, 256 * 8);
    for k in 0..256 {
        let (x, y) = (xs[k], ys[k]);
        let want = [
            x + y,
            x - y,
            x * y,
            x / y,
            x.abs().sqrt(),
            x.floor(),
            x.max(y),
            (x < y) as u8 as f64 + 2.0 * (x == y) as u8 as f64,
        ];
        for op in 0..8 {
            // Double division and sqrt are correctly rounded in OpenCL (0 ulp).
            assert_eq!(
                got[k * 8 + op].to_bits(),
                want[op].to_bits(),
                "double op {op} x={x} y={y}: {}",
                got[k * 8 + op]
            );
        }
    }
}

#[test]
fn comparisons_and_select_with_nan() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global const float* a, global const float* b, global int* o, global float* f) {
    size_t i = get_global_id(0);
    float x = a[i], y = b[i];
    global int* r = o + i * 8;
    r[0] = x < y;
    r[1] = x <= y;
    r[2] = x == y;
    r[3] = x != y;
    r[4] = isnan(x);
    r[5] = isinf(x);
    r[6] = isordered(x, y);
    r[7] = signbit(x);
    f[i] = select(x, y, (int)(x > y));
}
"#;
    let nan = f32::NAN;
    let xs = [1.0f32, 2.0, nan, -0.0, f32::INFINITY, 3.0, nan, -5.0];
    let ys = [2.0f32, 2.0, 1.0, 0.0, 1.0, nan, nan, -6.0];
    let a = ctx.buffer_from(&xs);
    let b = ctx.buffer_from(&ys);
    let o = ctx.buffer_zeroed::<i32>(64);
    let f = ctx.buffer_zeroed::<f32>(8);
    run_with_buffers(&ctx, src, "", "k", &[&a, &b, &o, &f], &[8], None);
    let got: Vec<i32> = ctx.read(&o, 64);
    let sel: Vec<f32> = ctx.read(&f, 8);
    for k in 0..8 {
        let (x, y) = (xs[k], ys[k]);
        let want = [
            (x < y) as i32,
            (x <= y) as i32,
            (x == y) as i32,
            (x != y) as i32,
            x.is_nan() as i32,
            x.is_infinite() as i32,
            (!x.is_nan() && !y.is_nan()) as i32,
            x.is_sign_negative() as i32,
        ];
        assert_eq!(&got[k * 8..k * 8 + 8], &want, "x={x} y={y}");
        let want_sel = if x > y { y } else { x };
        assert!(
            sel[k].to_bits() == want_sel.to_bits() || sel[k].is_nan() && want_sel.is_nan(),
            "select x={x} y={y}"
        );
    }
}

#[test]
fn conversions() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global const float* a, global const int* b, global int* oi, global float* of, global uint* ou) {
    size_t i = get_global_id(0);
    float x = a[i];
    int n = b[i];
    global int* r = oi + i * 8;
    r[0] = (int)x;
    r[1] = convert_int_rte(x);
    r[2] = convert_int_rtn(x);
    r[3] = convert_int_rtp(x);
    r[4] = convert_int_sat(x);
    r[5] = (int)convert_uchar_sat(n);
    r[6] = (int)convert_short_sat(n);
    r[7] = (int)(char)n;
    global float* f = of + i * 3;
    f[0] = (float)n;
    f[1] = convert_float((ulong)(uint)n << 20);
    f[2] = (float)((long)n * 1000003L);
    global uint* u = ou + i * 3;
    u[0] = (uint)n;
    u[1] = convert_uint_sat(x);
    u[2] = (uint)((ulong)(long)n >> 32);
}
"#;
    let xs: Vec<f32> = vec![
        1.5,
        2.5,
        -1.5,
        -2.5,
        0.49999997,
        1e10,
        -1e10,
        f32::NAN,
        3.7,
        -3.7,
        123456.5,
        -0.0,
        2147483520.0,
        4e9,
        0.0,
        7.0,
    ];
    let ns: Vec<i32> = vec![
        0,
        1,
        -1,
        255,
        256,
        -129,
        40000,
        -40000,
        i32::MAX,
        i32::MIN,
        127,
        128,
        16777217,
        -16777217,
        1000,
        -7,
    ];
    let n = xs.len();
    let a = ctx.buffer_from(&xs);
    let b = ctx.buffer_from(&ns);
    let oi = ctx.buffer_zeroed::<i32>(n * 8);
    let of = ctx.buffer_zeroed::<f32>(n * 3);
    let ou = ctx.buffer_zeroed::<u32>(n * 3);
    run_with_buffers(&ctx, src, "", "k", &[&a, &b, &oi, &of, &ou], &[n], None);
    let gi: Vec<i32> = ctx.read(&oi, n * 8);
    let gf: Vec<f32> = ctx.read(&of, n * 3);
    let gu: Vec<u32> = ctx.read(&ou, n * 3);
    let sat_i32 = |v: f64| -> i32 {
        if v.is_nan() {
            0
        } else {
            v.clamp(i32::MIN as f64, i32::MAX as f64) as i32
        }
    };
    for k in 0..n {
        let x = xs[k];
        let m = ns[k];
        let xd = x as f64;
        let in_range =
            xd.is_finite() && xd.trunc() >= i32::MIN as f64 && xd.trunc() <= i32::MAX as f64;
        if in_range {
            assert_eq!(gi[k * 8], xd.trunc() as i32, "(int){x}");
            assert_eq!(gi[k * 8 + 1], xd.round_ties_even() as i32, "rte {x}");
            assert_eq!(gi[k * 8 + 2], xd.floor() as i32, "rtn {x}");
            assert_eq!(gi[k * 8 + 3], xd.ceil() as i32, "rtp {x}");
        }
        assert_eq!(gi[k * 8 + 4], sat_i32(xd.trunc()), "convert_int_sat({x})");
        assert_eq!(gi[k * 8 + 5], m.clamp(0, 255), "convert_uchar_sat({m})");
        assert_eq!(
            gi[k * 8 + 6],
            m.clamp(i16::MIN as i32, i16::MAX as i32),
            "convert_short_sat({m})"
        );
        assert_eq!(gi[k * 8 + 7], m as i8 as i32, "(char){m}");
        assert_eq!(gf[k * 3].to_bits(), (m as f32).to_bits(), "(float){m}");
        assert_eq!(
            gf[k * 3 + 1].to_bits(),
            (((m as u32 as u64) << 20) as f32).to_bits(),
            "convert_float(ulong)"
        );
        assert_eq!(
            gf[k * 3 + 2].to_bits(),
            ((m as i64 * 1000003) as f32).to_bits(),
            "(float)long"
        );
        assert_eq!(gu[k * 3], m as u32, "(uint){m}");
        // OpenCL C 6.4.3.3: saturated conversions turn NaN into 0 (the Intel CPU
        // runtime gives UINT_MAX here; PoCL follows the spec).
        let sat_u = if xd.is_nan() {
            0
        } else {
            xd.trunc().clamp(0.0, u32::MAX as f64) as u32
        };
        assert_eq!(gu[k * 3 + 1], sat_u, "convert_uint_sat({x})");
        assert_eq!(
            gu[k * 3 + 2],
            ((m as i64 as u64) >> 32) as u32,
            "sign extension of {m}"
        );
    }
}

#[test]
fn double_float_conversions() {
    let ctx = DeviceContext::new();
    if !require(ctx.has_extension("cl_khr_fp64"), "cl_khr_fp64") {
        return;
    }
    let src = r#"
kernel void k(global const double* a, global float* of, global long* ol, global double* od) {
    size_t i = get_global_id(0);
    of[i] = (float)a[i];
    ol[i] = convert_long_sat(a[i]);
    od[i] = (double)(float)a[i] + (double)(long)(a[i] / 3.0);
}
"#;
    let xs = [
        1.0f64 / 3.0,
        1e300,
        -1e300,
        16777217.0,
        0.1,
        -2.75,
        9.3e18,
        1e-320,
    ];
    let a = ctx.buffer_from(&xs);
    let of = ctx.buffer_zeroed::<f32>(8);
    let ol = ctx.buffer_zeroed::<i64>(8);
    let od = ctx.buffer_zeroed::<f64>(8);
    run_with_buffers(&ctx, src, "", "k", &[&a, &of, &ol, &od], &[8], None);
    let gf: Vec<f32> = ctx.read(&of, 8);
    let gl: Vec<i64> = ctx.read(&ol, 8);
    let gd: Vec<f64> = ctx.read(&od, 8);
    for k in 0..8 {
        let x = xs[k];
        assert_eq!(gf[k].to_bits(), (x as f32).to_bits(), "(float){x}");
        assert_eq!(gl[k], x as i64, "convert_long_sat({x})"); // Rust `as` saturates too.
        if (x / 3.0).abs() < 9e18 {
            assert_eq!(
                gd[k],
                (x as f32) as f64 + ((x / 3.0) as i64) as f64,
                "mixed conversion of {x}"
            );
        }
    }
}

#[test]
fn vector_types() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global const float4* a, global const int8* b, global float4* of, global int8* oi,
              global uchar16* oc, global float* os) {
    size_t i = get_global_id(0);
    float4 x = a[i];
    int8 n = b[i];
    of[3 * i] = x * x.wzyx + (float4)(1.0f, 2.0f, 3.0f, 4.0f);
    of[3 * i + 1] = select(x, -x, x < (float4)(0.0f));
    of[3 * i + 2] = convert_float4(n.hi) + convert_float4(n.lo).s1032;
    int8 cmp = n > (int8)(0);
    oi[2 * i] = cmp;
    oi[2 * i + 1] = (int8)(n.even, n.odd) + (int8)(as_int4(x), as_int4(x));
    uchar16 c = as_uchar16(n.lo) + (uchar16)(200);
    oc[i] = c;
    float4 v = vload4(1, os + 8 * i);
    vstore4(v.xxyy * 2.0f, 0, os + 8 * i);
}
"#;
    let n = 32;
    let mut rng = TestRng::new(3);
    let xs: Vec<[f32; 4]> = rng.vec(n, |r| {
        [
            r.f32_in(-4.0, 4.0),
            r.f32_in(-4.0, 4.0),
            r.f32_in(-4.0, 4.0),
            r.f32_in(-4.0, 4.0),
        ]
    });
    let ns: Vec<[i32; 8]> = rng.vec(n, |r| {
        let mut v = [0i32; 8];
        for e in v.iter_mut() {
            *e = (r.next_u32() % 2001) as i32 - 1000;
        }
        v
    });
    let scratch: Vec<f32> = (0..n * 8).map(|i| i as f32).collect();
    let a = ctx.buffer_from(&xs);
    let b = ctx.buffer_from(&ns);
    let of = ctx.buffer_zeroed::<[f32; 4]>(n * 3);
    let oi = ctx.buffer_zeroed::<[i32; 8]>(n * 2);
    let oc = ctx.buffer_zeroed::<[u8; 16]>(n);
    let os = ctx.buffer_from(&scratch);
    run_with_buffers(
        &ctx,
        src,
        "",
        "k",
        &[&a, &b, &of, &oi, &oc, &os],
        &[n],
        None,
    );
    let gf: Vec<[f32; 4]> = ctx.read(&of, n * 3);
    let gi: Vec<[i32; 8]> = ctx.read(&oi, n * 2);
    let gc: Vec<[u8; 16]> = ctx.read(&oc, n);
    let gs: Vec<f32> = ctx.read(&os, n * 8);
    for k in 0..n {
        let x = xs[k];
        let m = ns[k];
        let add = [1.0f32, 2.0, 3.0, 4.0];
        for c in 0..4 {
            let want = x[c] * x[3 - c] + add[c];
            assert!(
                (gf[3 * k][c] - want).abs() <= 1e-5 * want.abs().max(1.0),
                "mad lane {c}"
            );
            assert_eq!(
                gf[3 * k + 1][c],
                if x[c] < 0.0 { -x[c] } else { x[c] },
                "vector select lane {c}"
            );
        }
        let lo_swz = [m[1], m[0], m[3], m[2]];
        for c in 0..4 {
            assert_eq!(
                gf[3 * k + 2][c],
                m[4 + c] as f32 + lo_swz[c] as f32,
                "hi/lo/swizzle lane {c}"
            );
        }
        for c in 0..8 {
            assert_eq!(
                gi[2 * k][c],
                if m[c] > 0 { -1 } else { 0 },
                "vector compare is -1/0"
            );
        }
        let eo = [m[0], m[2], m[4], m[6], m[1], m[3], m[5], m[7]];
        for c in 0..8 {
            let bits = x[c % 4].to_bits() as i32;
            assert_eq!(
                gi[2 * k + 1][c],
                eo[c].wrapping_add(bits),
                "even/odd lane {c}"
            );
        }
        let lo_bytes: Vec<u8> = m[..4].iter().flat_map(|v| v.to_le_bytes()).collect();
        for c in 0..16 {
            assert_eq!(gc[k][c], lo_bytes[c].wrapping_add(200), "uchar16 lane {c}");
        }
        let base = (k * 8) as f32;
        let v = [base + 4.0, base + 5.0, base + 6.0, base + 7.0];
        assert_eq!(
            &gs[k * 8..k * 8 + 4],
            &[v[0] * 2.0, v[0] * 2.0, v[1] * 2.0, v[1] * 2.0],
            "vload4/vstore4"
        );
        assert_eq!(&gs[k * 8 + 4..k * 8 + 8], &v, "vstore4 leaves the rest");
    }
}

#[test]
fn vector_arguments_by_value() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global float* o, float4 f, int2 n, uchar3 c, double2 d) {
    o[0] = f.x + f.y * 10.0f + f.z * 100.0f + f.w * 1000.0f;
    o[1] = (float)(n.x - n.y);
    o[2] = (float)(c.x + c.y + c.z);
    o[3] = (float)(d.x * d.y);
}
"#;
    if !require(ctx.has_extension("cl_khr_fp64"), "cl_khr_fp64") {
        return;
    }
    let kernel = ctx.kernel(src, "", "k");
    let out = ctx.buffer_zeroed::<f32>(4);
    kernel
        .arg_buffer(0, &out)
        .arg(1, [1.0f32, 2.0, 3.0, 4.0])
        .arg(2, [50i32, 8])
        .arg(4, [1.5f64, -4.0]);
    // uchar3 has the size (and alignment) of uchar4.
    kernel.arg(3, [1u8, 2, 250, 99]);
    ctx.run(&kernel, &[1], None);
    assert_eq!(ctx.read::<f32>(&out, 4), vec![4321.0, 42.0, 253.0, -6.0]);
}

#[test]
fn fp_contract_off_is_honoured() {
    // With FP_CONTRACT OFF, a * b + c must round the product: the result is 0 for
    // these inputs, where a fused operation would give -2^-46.
    let ctx = DeviceContext::new();
    let src = r#"
#pragma OPENCL FP_CONTRACT OFF
kernel void k(global const float* a, global float* o) {
    o[get_global_id(0)] = a[0] * a[1] + a[2];
}
"#;
    let e = f32::EPSILON;
    let input = [1.0 + e, 1.0 - e, -1.0f32];
    let a = ctx.buffer_from(&input);
    let o = ctx.buffer_zeroed::<f32>(8);
    run_with_buffers(&ctx, src, "", "k", &[&a, &o], &[8], None);
    assert_eq!(
        ctx.read::<f32>(&o, 8),
        vec![0.0f32; 8],
        "a * b + c was fused despite FP_CONTRACT OFF"
    );
    if ctx.supports_spirv() {
        // The same through SPIR-V (clang marks the kernel ContractionOff).
        let il = spirv::compile(src, &[]).unwrap_or_else(|e| panic!("{e}"));
        let program = ctx.try_build_il(&il, "").unwrap_or_else(|f| panic!("{f}"));
        let kernel = program.kernel("k");
        let o = ctx.buffer_zeroed::<f32>(8);
        kernel.arg_buffer(0, &a).arg_buffer(1, &o);
        ctx.run(&kernel, &[8], None);
        assert_eq!(
            ctx.read::<f32>(&o, 8),
            vec![0.0f32; 8],
            "SPIR-V ContractionOff not honoured"
        );
    }
}

const VEC_OPS: usize = 9;

/// Vector integer operations (no integer promotion: shifts use the count modulo the
/// element width, comparisons give -1/0, `select` looks at the condition's top bit).
fn vec_kernel(t: IntType, n: usize) -> String {
    format!(
        r#"
typedef {t}{n} V;
kernel void ops(global const {t}* a, global const {t}* b, global {t}* o) {{
    size_t i = get_global_id(0);
    V x = vload{n}(i, a), y = vload{n}(i, b);
    global {t}* r = o + i * {n} * {VEC_OPS};
    vstore{n}(x + y, 0, r);
    vstore{n}(x - y, 1, r);
    vstore{n}(x * y, 2, r);
    vstore{n}(x << y, 3, r);
    vstore{n}(x >> y, 4, r);
    vstore{n}(as_{t}{n}(x < y), 5, r);
    vstore{n}(select(x, y, as_{s}{n}(x ^ y)), 6, r);
    vstore{n}(min(x, y), 7, r);
    vstore{n}(x / (y | ({t})1), 8, r);
}}
"#,
        t = t.name,
        s = match t.bits {
            8 => "char",
            16 => "short",
            32 => "int",
            _ => "long",
        },
    )
}

#[test]
fn integer_vectors_every_width() {
    let ctx = DeviceContext::new();
    let combos: [(IntType, usize); 8] = [
        (INT_TYPES[0], 16),
        (INT_TYPES[1], 8),
        (INT_TYPES[2], 8),
        (INT_TYPES[3], 4),
        (INT_TYPES[4], 4),
        (INT_TYPES[5], 2),
        (INT_TYPES[6], 2),
        (INT_TYPES[7], 4),
    ];
    let mut rng = TestRng::new(0xbeef);
    for (t, n) in combos {
        let items = 64;
        let len = items * n;
        let xs: Vec<i128> = (0..len).map(|_| t.wrap(rng.next_u64() as i128)).collect();
        let ys: Vec<i128> = (0..len).map(|_| t.wrap(rng.next_u64() as i128)).collect();
        let bytes = t.bits as usize / 8;
        let a = ctx.buffer_from(&t.encode(&xs));
        let b = ctx.buffer_from(&t.encode(&ys));
        let o = ctx.buffer_zeroed::<u8>(len * VEC_OPS * bytes);
        run_with_buffers(
            &ctx,
            &vec_kernel(t, n),
            "",
            "ops",
            &[&a, &b, &o],
            &[items],
            None,
        );
        let got = t.decode(&ctx.read::<u8>(&o, len * VEC_OPS * bytes));
        let signed_view = |v: i128| -> i128 {
            // The value's bits read as the signed type of the same width.
            let m = 1i128 << t.bits;
            let u = v.rem_euclid(m);
            if u >= m / 2 {
                u - m
            } else {
                u
            }
        };
        for item in 0..items {
            for lane in 0..n {
                let k = item * n + lane;
                let (x, y) = (xs[k], ys[k]);
                let s = (y.rem_euclid(1 << t.bits) % t.bits as i128) as u32;
                let mut d = y | 1;
                if !t.signed {
                    d = t.wrap(d);
                }
                if t.signed && x == t.min() && d == -1 {
                    continue; // overflow: undefined
                }
                let want = [
                    t.wrap(x + y),
                    t.wrap(x - y),
                    t.wrap(x.wrapping_mul(y)),
                    t.wrap(x << s),
                    t.wrap(x >> s),
                    t.wrap(if x < y { -1 } else { 0 }),
                    if signed_view(x ^ y) < 0 { y } else { x },
                    x.min(y),
                    t.wrap(x / d),
                ];
                for (op, w) in want.iter().enumerate() {
                    let g = got[item * n * VEC_OPS + op * n + lane];
                    assert_eq!(g, *w, "{}{n} op {op} lane {lane}: x={x} y={y}", t.name);
                }
            }
        }
    }
}

/// `.even`/`.odd` of 8-component vectors of every element size: clang-22 loads
/// them as 7-component vectors and pads half shuffles with a ushort vector, which
/// the intake accepts (CTS basic hiloeo); compared with the host.
#[test]
fn even_and_odd_of_eight_components() {
    let ctx = DeviceContext::new();
    let half = ctx.has_extension("cl_khr_fp16");
    let mut types = vec![("char", 1usize), ("short", 2), ("int", 4), ("long", 8)];
    if half {
        types.push(("half", 2));
    }
    let n = 16;
    for (t, size) in types {
        let pragma = if t == "half" {
            "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
        } else {
            ""
        };
        let src = format!(
            "{pragma}kernel void k(global {t}8 *a, global {t}4 *even, global {t}4 *odd) {{
               int i = get_global_id(0);
               even[i] = a[i].even;
               odd[i] = a[i].odd;
             }}"
        );
        // Distinct byte patterns per element (half: small integers, exact).
        let bytes: Vec<u8> = (0..n * 8)
            .flat_map(|e| {
                let v: u64 = if t == "half" {
                    // 1.0 + e/1024 as a binary16 bit pattern.
                    0x3c00 + e as u64
                } else {
                    0x0102_0304_0506_0708u64.wrapping_mul(e as u64 + 1)
                };
                v.to_le_bytes()[..size].to_vec()
            })
            .collect();
        let a = ctx.buffer_from(&bytes);
        let even = ctx.buffer_zeroed::<u8>(n * 4 * size);
        let odd = ctx.buffer_zeroed::<u8>(n * 4 * size);
        run_with_buffers(&ctx, &src, "", "k", &[&a, &even, &odd], &[n], None);
        let ge: Vec<u8> = ctx.read(&even, n * 4 * size);
        let go: Vec<u8> = ctx.read(&odd, n * 4 * size);
        for v in 0..n {
            for c in 0..4 {
                let elem = |k: usize| &bytes[(v * 8 + k) * size..(v * 8 + k + 1) * size];
                let at = (v * 4 + c) * size..(v * 4 + c + 1) * size;
                assert_eq!(&ge[at.clone()], elem(2 * c), "{t}8[{v}].even[{c}]");
                assert_eq!(&go[at], elem(2 * c + 1), "{t}8[{v}].odd[{c}]");
            }
        }
    }
}

/// Single components of a `T2*` kernel parameter stored into a `T3` with `vstore3`:
/// clang-22 types the parameter as a pointer to a 1-component vector (which SPIR-V
/// forbids), and the intake accepts it as its component (CTS relationals
/// shuffle_copy); compared with the host.
#[test]
fn components_of_two_component_parameter() {
    let ctx = DeviceContext::new();
    for (t, size) in [("char", 1usize), ("float", 4), ("double", 8)] {
        let src = format!(
            "kernel void k(global {t}2 *a, global {t} *dest) {{
               if (get_global_id(0) != 0) return;
               {t}3 tmp = ({t})0;
               tmp.s1 = a[0].x; vstore3(tmp, 0, dest);
               tmp = ({t})0;
               tmp.s2 = a[1].y; vstore3(tmp, 1, dest);
               tmp = ({t})0;
               tmp.s0 = a[2].y; vstore3(tmp, 2, dest);
             }}"
        );
        let bytes: Vec<u8> = (0..6u8)
            .flat_map(|e| {
                let mut v = vec![0u8; size];
                v[size - 1] = 0x10 + e;
                v[0] |= 1;
                v
            })
            .collect();
        let a = ctx.buffer_from(&bytes);
        let dest = ctx.buffer_zeroed::<u8>(9 * size);
        run_with_buffers(&ctx, &src, "-cl-std=CL3.0", "k", &[&a, &dest], &[4], None);
        let got: Vec<u8> = ctx.read(&dest, 9 * size);
        let elem = |k: usize| bytes[k * size..(k + 1) * size].to_vec();
        let zero = vec![0u8; size];
        let want: Vec<u8> = [
            zero.clone(),
            elem(0),
            zero.clone(),
            zero.clone(),
            zero.clone(),
            elem(3),
            elem(5),
            zero.clone(),
            zero,
        ]
        .concat();
        assert_eq!(got, want, "{t}2 components through vstore3");
    }
}
