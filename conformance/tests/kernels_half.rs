//! Half-precision loads and stores through the driver (its header and clang): every
//! `vload(a)_half<n>` / `vstore(a)_half<n>` width, in every OpenCL C version the
//! driver offers, against the host's exact conversions.
//!
//! clang-22 emits `vloada_half3` with the stride of `vload_half3` (3 halves, not 4);
//! the driver header redefines it, which this test pins.

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

/// The value of half bits `h` (finite halves only in this test).
fn half_value(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let mant = f32::from(h & 0x3ff);
    if exp == 0 {
        sign * mant * 2f32.powi(-24)
    } else {
        sign * (1024.0 + mant) * 2f32.powi(exp - 25)
    }
}

#[test]
fn vloada_half_of_every_width_uses_the_aligned_stride() {
    let ctx = DeviceContext::new();
    let src = "kernel void k(global const half* p, global float* o) {\n\
               size_t i = get_global_id(0);\n\
               float2 a = vloada_half2(i, p);\n\
               float3 b = vloada_half3(i, p);\n\
               float4 c = vloada_half4(i, p);\n\
               float3 d = vload_half3(i, p);\n\
               o[12*i+0] = a.x; o[12*i+1] = a.y;\n\
               o[12*i+2] = b.x; o[12*i+3] = b.y; o[12*i+4] = b.z;\n\
               o[12*i+5] = c.x; o[12*i+6] = c.y; o[12*i+7] = c.z; o[12*i+8] = c.w;\n\
               o[12*i+9] = d.x; o[12*i+10] = d.y; o[12*i+11] = d.z;\n}\n";
    let n = 64;
    // Finite halves: small integers and fractions.
    let halves: Vec<u16> = (0..4 * n as u16 + 4).map(|x| 0x3000 + x * 7).collect();
    for std in ["", "-cl-std=CL1.1", "-cl-std=CL1.2", "-cl-std=CL3.0"] {
        let p = ctx.buffer_from(&halves);
        let o = ctx.buffer_zeroed::<f32>(12 * n);
        run_with_buffers(&ctx, src, std, "k", &[&p, &o], &[n], None);
        let got: Vec<f32> = ctx.read(&o, 12 * n);
        for i in 0..n {
            let h = |k: usize| half_value(halves[k]);
            let want = [
                h(2 * i),
                h(2 * i + 1),
                h(4 * i),
                h(4 * i + 1),
                h(4 * i + 2),
                h(4 * i),
                h(4 * i + 1),
                h(4 * i + 2),
                h(4 * i + 3),
                h(3 * i),
                h(3 * i + 1),
                h(3 * i + 2),
            ];
            assert_eq!(&got[12 * i..12 * i + 12], &want, "{std} item {i}");
        }
    }
}

#[test]
fn half_arithmetic_when_cl_khr_fp16_is_reported() {
    let ctx = DeviceContext::new();
    let d = ctx.device;
    let config: cl_ulong = device_info(d, CL_DEVICE_HALF_FP_CONFIG).unwrap();
    let width: cl_uint = device_info(d, CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF).unwrap();
    if !ctx.has_extension("cl_khr_fp16") {
        assert_eq!((config, width), (0, 0), "half queries without cl_khr_fp16");
        return;
    }
    assert_eq!(
        config & (CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN),
        CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN
    );
    assert!(width > 0);
    let src = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n\
               kernel void k(global const half* a, global const half* b, global half* o) {\n\
               size_t i = get_global_id(0);\n\
               half x = a[i], y = b[i];\n\
               o[3*i] = x * y + x;\n\
               o[3*i+1] = convert_half_rtz(convert_float(x) / 3.0f);\n\
               o[3*i+2] = max(x, y);\n}\n";
    // Small multiples of 1/4: products and sums are exact in half.
    let n = 256usize;
    let a: Vec<u16> = (0..n)
        .map(|k| half_bits((k % 40) as f32 * 0.25 - 5.0))
        .collect();
    let b: Vec<u16> = (0..n)
        .map(|k| half_bits((k % 13) as f32 * 0.5 - 3.0))
        .collect();
    let (pa, pb) = (ctx.buffer_from(&a), ctx.buffer_from(&b));
    let o = ctx.buffer_zeroed::<u16>(3 * n);
    run_with_buffers(&ctx, src, "", "k", &[&pa, &pb, &o], &[n], None);
    let got: Vec<u16> = ctx.read(&o, 3 * n);
    for k in 0..n {
        let (x, y) = (half_value(a[k]), half_value(b[k]));
        assert_eq!(half_value(got[3 * k]), x * y + x, "{x} * {y} + {x}");
        // x / 3 rounded toward zero to half: at most one half ulp below in magnitude.
        let q = x / 3.0;
        let g = half_value(got[3 * k + 1]);
        assert!(
            g.abs() <= q.abs() && q.abs() - g.abs() <= q.abs() / 1024.0,
            "{x} / 3 -> {g}"
        );
        assert_eq!(half_value(got[3 * k + 2]), x.max(y));
    }
}

/// Half bits of `v`, exact for the values of these tests.
fn half_bits(v: f32) -> u16 {
    let sign = if v < 0.0 { 0x8000 } else { 0 };
    let a = v.abs();
    if a == 0.0 {
        return sign;
    }
    let e = a.log2().floor() as i32;
    let m = (a / 2f32.powi(e) * 1024.0) as u16 - 1024;
    sign | (((e + 15) as u16) << 10) | m
}
