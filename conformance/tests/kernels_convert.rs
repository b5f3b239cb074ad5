//! Integer -> integer `convert_*` built-ins for every pair of integer types, plain
//! and saturating, scalar and vector, against an exact host reference.
//!
//! clang-22's SPIR-V backend lowers these calls from the destination's signedness
//! alone (convert_long(int) as a zero extension, convert_short_sat(int) as
//! unsigned -> signed); the driver header replaces them, and this test pins the
//! result for all 64 type pairs.

use cranecl_conformance::*;

/// (OpenCL type name, bits, signed)
const TYPES: [(&str, u32, bool); 8] = [
    ("char", 8, true),
    ("uchar", 8, false),
    ("short", 16, true),
    ("ushort", 16, false),
    ("int", 32, true),
    ("uint", 32, false),
    ("long", 64, true),
    ("ulong", 64, false),
];

/// `x` truncated to `bits` and read with the given signedness.
fn wrap(x: i128, bits: u32, signed: bool) -> i128 {
    let m = x & ((1i128 << bits) - 1);
    if signed && m >= 1i128 << (bits - 1) {
        m - (1i128 << bits)
    } else {
        m
    }
}

fn range(bits: u32, signed: bool) -> (i128, i128) {
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// What `(long)v` stores for a value of the destination type: its 64-bit pattern.
fn as_long(v: i128) -> i64 {
    v as i64
}

fn inputs() -> Vec<i64> {
    vec![
        0,
        1,
        -1,
        127,
        128,
        -128,
        -129,
        255,
        256,
        32767,
        32768,
        -32768,
        -32769,
        65535,
        65536,
        i32::MAX as i64,
        i32::MIN as i64,
        u32::MAX as i64,
        1 << 32,
        i64::MAX,
        i64::MIN,
        -7,
        1_000_000_007,
        -123_456_789_012,
    ]
}

#[test]
fn every_integer_pair_plain_and_saturating() {
    let ctx = DeviceContext::new();
    let mut body = String::new();
    let mut slot = 0usize;
    for (d, _, _) in TYPES {
        for (s, _, _) in TYPES {
            body.push_str(&format!(
                "    o[i * N + {slot}] = (long)convert_{d}(({s})x);\n    o[i * N + {}] = (long)convert_{d}_sat(({s})x);\n",
                slot + 1
            ));
            // The 4-wide vector forms, checked through lane 2.
            body.push_str(&format!(
                "    o[i * N + {}] = (long)convert_{d}4(({s}4)(({s})x)).z;\n    o[i * N + {}] = (long)convert_{d}4_sat_rte(({s}4)(({s})x)).z;\n",
                slot + 2,
                slot + 3
            ));
            slot += 4;
        }
    }
    let per = slot;
    let src = format!(
        "#define N {per}\nkernel void k(global const long* in, global long* o) {{\n    size_t i = get_global_id(0);\n    long x = in[i];\n{body}}}\n"
    );
    let xs = inputs();
    let n = xs.len();
    let a = ctx.buffer_from(&xs);
    let o = ctx.buffer_zeroed::<i64>(n * per);
    run_with_buffers(&ctx, &src, "", "k", &[&a, &o], &[n], None);
    let got: Vec<i64> = ctx.read(&o, n * per);
    let mut failures = Vec::new();
    for (k, &x) in xs.iter().enumerate() {
        let mut slot = 0;
        for (d, db, ds) in TYPES {
            for (s, sb, ss) in TYPES {
                let v = wrap(x as i128, sb, ss);
                let plain = as_long(wrap(v, db, ds));
                let (lo, hi) = range(db, ds);
                let sat = as_long(v.clamp(lo, hi));
                let want = [plain, sat, plain, sat];
                for (j, w) in want.iter().enumerate() {
                    let g = got[k * per + slot + j];
                    if g != *w {
                        let form = ["convert", "convert_sat", "convert4", "convert4_sat_rte"][j];
                        failures.push(format!("{form} {s} -> {d} of {v}: got {g}, want {w}"));
                    }
                }
                slot += 4;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} wrong conversions, first: {:#?}",
        failures.len(),
        &failures[..failures.len().min(12)]
    );
}

/// `convert_float(float)` and `convert_double(double)` with every rounding suffix
/// (clang-22 emits a same-width OpFConvert for them): the value unchanged, NaN
/// payload aside, for ordinary, subnormal, infinite and NaN inputs.
#[test]
fn same_type_float_conversions_copy_the_value() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void f(global const float *a, global float *o) {
    size_t i = get_global_id(0);
    o[5 * i] = convert_float(a[i]);
    o[5 * i + 1] = convert_float_rte(a[i]);
    o[5 * i + 2] = convert_float_rtz(a[i]);
    o[5 * i + 3] = convert_float_rtp(a[i]);
    o[5 * i + 4] = convert_float4_rtn((float4)(a[i])).w;
}
kernel void d(global const double *a, global double *o) {
    size_t i = get_global_id(0);
    o[2 * i] = convert_double(a[i]);
    o[2 * i + 1] = convert_double_rtz(a[i]);
}
"#;
    let program = ctx.build(src, "-cl-std=CL3.0");
    let input: Vec<f32> = vec![
        0.0,
        -0.0,
        1.5,
        -3.25e7,
        1e-40,
        -1e-45,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MAX,
        f32::MIN_POSITIVE,
        0.1,
        7.0,
        -2.5,
        1e30,
        123.456,
    ];
    let n = input.len();
    let inb = ctx.buffer_from(&input);
    let out = ctx.buffer_zeroed::<f32>(5 * n);
    let k = program.kernel("f");
    k.arg_buffer(0, &inb).arg_buffer(1, &out);
    ctx.run(&k, &[n], None);
    let got = ctx.read::<f32>(&out, 5 * n);
    for (i, x) in input.iter().enumerate() {
        for j in 0..5 {
            let y = got[5 * i + j];
            assert!(
                (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits(),
                "input {x:e} form {j}: {y:e}"
            );
        }
    }
    if ctx.has_extension("cl_khr_fp64") {
        let input: Vec<f64> = input.iter().map(|&x| f64::from(x) * 1.000_000_1).collect();
        let inb = ctx.buffer_from(&input);
        let out = ctx.buffer_zeroed::<f64>(2 * n);
        let k = program.kernel("d");
        k.arg_buffer(0, &inb).arg_buffer(1, &out);
        ctx.run(&k, &[n], None);
        let got = ctx.read::<f64>(&out, 2 * n);
        for (i, x) in input.iter().enumerate() {
            for j in 0..2 {
                let y = got[2 * i + j];
                assert!(
                    (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits(),
                    "{x:e}: {y:e}"
                );
            }
        }
    }
}
