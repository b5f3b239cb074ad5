//! Half-precision loads and stores through the driver (its header and clang): every
//! `vload(a)_half<n>` / `vstore(a)_half<n>` width, in every OpenCL C version the
//! driver offers, against the host's exact conversions.
//!
//! clang-22 emits `vloada_half3` with the stride of `vload_half3` (3 halves, not 4);
//! the driver header redefines it, which this test pins.

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
