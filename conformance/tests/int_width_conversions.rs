//! Conversions between char, short, int, long and float, plain and saturating, and
//! saturating add/sub of chars and shorts, on values that differ per work-item (the
//! jit does these in vector registers) and on uniform ones, against the host:
//! truncation and sign or zero extension, clamping, NaN to 0, rounding toward zero.

use cranecl_conformance::*;

const SRC: &str = r#"
kernel void conv(global const int *iv, global const float *fv, global int *out, int u)
{
    size_t g = get_global_id(0);
    int i = iv[g];
    float f = fv[g];
    global int *r = out + g * 32;
    r[0] = convert_uchar_sat(f);
    r[1] = convert_char_sat(f);
    r[2] = convert_ushort_sat(f);
    r[3] = convert_short_sat(f);
    r[4] = (int)convert_uint_sat(f);
    r[5] = convert_int_sat(f);
    r[6] = convert_uchar_sat_rte(f);
    r[7] = convert_short_sat_rtn(f);
    r[8] = as_int(convert_float((uchar)i));
    r[9] = as_int(convert_float((char)i));
    r[10] = as_int(convert_float((ushort)i));
    r[11] = as_int(convert_float((short)i));
    r[12] = convert_uchar_sat(i);
    r[13] = convert_char_sat((uint)i);
    r[14] = convert_short_sat(i);
    r[15] = convert_ushort_sat((short)i);
    r[16] = convert_uchar_sat((short)i);
    r[17] = convert_char_sat((ushort)i);
    r[18] = convert_ushort(i);
    r[19] = convert_char((long)i * 77);
    r[20] = (int)(convert_long((char)i) >> 32);
    r[21] = (int)convert_ulong((uchar)i);
    r[22] = add_sat((char)i, (char)(i >> 8));
    r[23] = add_sat((uchar)i, (uchar)(i >> 8));
    r[24] = sub_sat((short)i, (short)(i >> 16));
    r[25] = sub_sat((ushort)i, (ushort)(i >> 16));
    r[26] = add_sat((short)i, (short)u);
    r[27] = sub_sat((uchar)u, (uchar)(u >> 4));
    r[28] = convert_uchar_sat(u);
    r[29] = convert_int(convert_float4((uchar4)((uchar)i, (uchar)(i >> 8), 7, 250)).y);
    uchar4 px = convert_uchar4_sat((float4)(f, -f, f * 0.5f, 300.0f));
    r[30] = px.x | (px.y << 8) | (px.z << 16) | (px.w << 24);
    r[31] = convert_short(f > -30000.0f && f < 30000.0f ? f : 0.0f);
}
"#;

/// The value OpenCL's saturating float-to-integer conversion gives (NaN to 0),
/// after rounding `f` with `round`.
fn sat(f: f32, lo: f64, hi: f64, round: fn(f64) -> f64) -> i64 {
    if f.is_nan() {
        return 0;
    }
    round(f64::from(f)).clamp(lo, hi) as i64
}

/// Round half to even.
fn rte(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - x.signum()
    } else {
        r
    }
}

fn host(i: i32, f: f32, u: i32) -> [i32; 32] {
    let t = f64::trunc;
    let clamp = |x: i64, lo: i64, hi: i64| x.clamp(lo, hi) as i32;
    let fb = |x: f32| x.to_bits() as i32;
    let px = [f, -f, f * 0.5, 300.0].map(|x| sat(x, 0.0, 255.0, t) as i32);
    [
        sat(f, 0.0, 255.0, t) as i32,
        sat(f, -128.0, 127.0, t) as i32,
        sat(f, 0.0, 65535.0, t) as i32,
        sat(f, -32768.0, 32767.0, t) as i32,
        sat(f, 0.0, 4294967295.0, t) as u32 as i32,
        sat(f, -2147483648.0, 2147483647.0, t) as i32,
        sat(f, 0.0, 255.0, rte) as i32,
        sat(f, -32768.0, 32767.0, f64::floor) as i32,
        fb(f32::from(i as u8)),
        fb(f32::from(i as i8)),
        fb(f32::from(i as u16)),
        fb(f32::from(i as i16)),
        clamp(i64::from(i), 0, 255),
        clamp(i64::from(i as u32), -128, 127),
        clamp(i64::from(i), -32768, 32767),
        clamp(i64::from(i as i16), 0, 65535),
        clamp(i64::from(i as i16), 0, 255),
        clamp(i64::from(i as u16), -128, 127),
        i32::from(i as u16),
        i32::from((i64::from(i) * 77) as i8),
        (i64::from(i as i8) >> 32) as i32,
        i32::from(i as u8),
        i32::from((i as i8).saturating_add((i >> 8) as i8)),
        i32::from((i as u8).saturating_add((i >> 8) as u8)),
        i32::from((i as i16).saturating_sub((i >> 16) as i16)),
        i32::from((i as u16).saturating_sub((i >> 16) as u16)),
        i32::from((i as i16).saturating_add(u as i16)),
        i32::from((u as u8).saturating_sub((u >> 4) as u8)),
        clamp(i64::from(u), 0, 255),
        i32::from((i >> 8) as u8),
        px[0] | (px[1] << 8) | (px[2] << 16) | (px[3] << 24),
        if f > -30000.0 && f < 30000.0 {
            f as i16 as i32
        } else {
            0
        },
    ]
}

#[test]
fn integer_width_conversions_and_saturating_ops_match_the_host() {
    let ctx = DeviceContext::new();
    let k = ctx.kernel(SRC, "", "conv");
    let mut rng = TestRng::new(0x5a7c);
    let mut ints: Vec<i32> = vec![
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
        i32::MAX,
        i32::MIN,
    ];
    let mut floats: Vec<f32> = vec![
        0.0,
        -0.0,
        0.5,
        1.5,
        2.5,
        -0.5,
        -1.5,
        254.5,
        255.49,
        255.5,
        256.0,
        -1.0,
        -128.5,
        127.5,
        65535.5,
        -32768.5,
        3.0e9,
        4.3e9,
        -3.0e9,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.0e-30,
    ];
    // 200 work-items (not a multiple of any sub-group width): random values too.
    while ints.len() < 200 {
        ints.push(rng.next_u32() as i32 >> (rng.next_u32() % 24));
    }
    while floats.len() < 200 {
        let x = (rng.next_u32() as i32 >> (rng.next_u32() % 28)) as f32;
        floats.push(x / (1 + rng.next_u32() % 8) as f32);
    }
    let ib = ctx.buffer_from(&ints);
    let fbuf = ctx.buffer_from(&floats);
    for u in [-300, 77, 40000] {
        let out = ctx.buffer_zeroed::<i32>(200 * 32);
        k.arg_buffer(0, &ib)
            .arg_buffer(1, &fbuf)
            .arg_buffer(2, &out)
            .arg(3, u);
        ctx.run(&k, &[200], Some(&[40]));
        let got: Vec<i32> = ctx.read(&out, 200 * 32);
        for g in 0..200 {
            let want = host(ints[g], floats[g], u);
            let row = &got[g * 32..(g + 1) * 32];
            for (j, (a, b)) in row.iter().zip(&want).enumerate() {
                assert_eq!(
                    a, b,
                    "result {j} for i = {}, f = {:e}, u = {u}: got {a:#x}, want {b:#x}",
                    ints[g], floats[g]
                );
            }
        }
    }
}
