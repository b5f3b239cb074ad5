//! Integer and float types, conversions, work-item ids in 2D/3D, bad input.

mod common;
use common::*;

#[test]
fn work_item_ids_2d_3d() {
    let src = r#"
kernel void ids(global int* out) {
  size_t lin = get_global_linear_id();
  out[8*lin+0] = get_global_id(0);
  out[8*lin+1] = get_global_id(1);
  out[8*lin+2] = get_global_id(2);
  out[8*lin+3] = get_local_id(0) + 10 * get_local_id(1) + 100 * get_local_id(2);
  out[8*lin+4] = get_group_id(0) + 10 * get_group_id(1) + 100 * get_group_id(2);
  out[8*lin+5] = get_local_linear_id();
  out[8*lin+6] = get_local_size(0) + 10 * get_local_size(1) + 100 * get_local_size(2);
  out[8*lin+7] = get_work_dim() + 10 * get_num_groups(0) + 100 * get_global_size(1);
}
"#;
    for w in [4, 8, 16] {
        let p = build_w(src, w);
        let k = kernel(&p, "ids");
        for (g, l) in [
            ([12usize, 6, 2], [4usize, 3, 2]),
            ([10, 9, 3], [3, 5, 2]),
            ([16, 4, 1], [16, 2, 1]),
            ([7, 5, 3], [2, 2, 2]),
        ] {
            let total = g[0] * g[1] * g[2];
            let mut out = vec![-1i32; 8 * total];
            run(k, &g, &l, &[buf(&mut out)]);
            for z in 0..g[2] {
                for y in 0..g[1] {
                    for x in 0..g[0] {
                        let lin = (z * g[1] + y) * g[0] + x;
                        let o = &out[8 * lin..8 * lin + 8];
                        let ctx = format!("w={w} g={g:?} l={l:?} at ({x},{y},{z})");
                        let (lx, ly, lz) = (x % l[0], y % l[1], z % l[2]);
                        let (gx, gy, gz) = (x / l[0], y / l[1], z / l[2]);
                        let ls = [0, 1, 2].map(|d| l[d].min(g[d] - [gx, gy, gz][d] * l[d]));
                        assert_eq!(&o[..3], &[x as i32, y as i32, z as i32], "{ctx}");
                        assert_eq!(o[3], (lx + 10 * ly + 100 * lz) as i32, "{ctx}");
                        assert_eq!(o[4], (gx + 10 * gy + 100 * gz) as i32, "{ctx}");
                        assert_eq!(o[5], (lz * ls[1] * ls[0] + ly * ls[0] + lx) as i32, "{ctx}");
                        assert_eq!(o[6], (ls[0] + 10 * ls[1] + 100 * ls[2]) as i32, "{ctx}");
                        assert_eq!(
                            o[7],
                            (3 + 10 * g[0].div_ceil(l[0]) + 100 * g[1]) as i32,
                            "{ctx}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn integer_types_and_conversions() {
    let src = r#"
kernel void k(global const int* in, global char* c, global short* s, global long* l, global uchar* uc,
              global double* d, global float* f, global int* r) {
  int i = get_global_id(0);
  int x = in[i];
  char cx = (char)x;
  c[i] = cx * (char)3 + (char)1;
  s[i] = (short)(x * 1000) / (short)7;
  l[i] = (long)x * 1000000007L - (long)i;
  uc[i] = convert_uchar_sat(x);
  d[i] = (double)x / 3.0 + 0.25;
  f[i] = (float)((double)x * 1.5);
  r[i] = convert_int_sat((float)x * 1e8f) / 1000 + (int)(x >> 2) + (int)((uint)x >> 28) + x % 7 + convert_int_rtn(x * 0.3f);
}
"#;
    let p = build(src);
    let k = kernel(&p, "k");
    let n = 64;
    let mut inp: Vec<i32> = (0..n as i32)
        .map(|i| (i - 32) * 17 + (i % 3) * 1000)
        .collect();
    let mut c = vec![0i8; n];
    let mut s = vec![0i16; n];
    let mut l = vec![0i64; n];
    let mut uc = vec![0u8; n];
    let mut d = vec![0f64; n];
    let mut f = vec![0f32; n];
    let mut r = vec![0i32; n];
    run(
        k,
        &[n],
        &[16],
        &[
            buf(&mut inp),
            buf(&mut c),
            buf(&mut s),
            buf(&mut l),
            buf(&mut uc),
            buf(&mut d),
            buf(&mut f),
            buf(&mut r),
        ],
    );
    for i in 0..n {
        let x = inp[i];
        assert_eq!(c[i], (x as i8).wrapping_mul(3).wrapping_add(1), "char {i}");
        assert_eq!(s[i], ((x.wrapping_mul(1000)) as i16) / 7, "short {i}");
        assert_eq!(l[i], x as i64 * 1000000007 - i as i64, "long {i}");
        assert_eq!(uc[i], x.clamp(0, 255) as u8, "uchar_sat {i}");
        assert_eq!(d[i], x as f64 / 3.0 + 0.25, "double {i}");
        assert_eq!(f[i], (x as f64 * 1.5) as f32, "float {i}");
        let sat = ((x as f32) * 1e8f32) as i32; // Rust `as` saturates like convert_int_sat
        let want = sat / 1000
            + (x >> 2)
            + ((x as u32) >> 28) as i32
            + x % 7
            + (x as f32 * 0.3).floor() as i32;
        assert_eq!(r[i], want, "int ops {i} (x={x})");
    }
}

#[test]
fn bad_input_is_an_error() {
    use cranecl_jit::{compile, validate, CompileErrorKind, CompileOptions};
    // Garbage.
    let e = compile(&[1, 2, 3], &CompileOptions::default())
        .err()
        .unwrap();
    assert_eq!(e.kind, CompileErrorKind::Malformed);
    let e = validate(&[0x0723_0203, 0x0001_0000, 0, 100, 0, 0xdead_beef, 0x1234])
        .err()
        .unwrap();
    assert_eq!(e.kind, CompileErrorKind::Malformed, "{}", e.message);
    // Random words after a valid header never panic.
    let mut words = spirv("kernel void k(global int* a) { a[get_global_id(0)] = 1; }");
    let valid = words.clone();
    let mut seed = 12345u32;
    for round in 0..200 {
        words.clone_from(&valid);
        for _ in 0..4 {
            seed = seed.wrapping_mul(1664525).wrapping_add(1013904223);
            let at = 5 + (seed as usize) % (words.len() - 5);
            seed = seed.wrapping_mul(1664525).wrapping_add(1013904223);
            words[at] = if round % 2 == 0 {
                seed
            } else {
                words[at] ^ (1 << (seed % 32))
            };
        }
        let _ = compile(&words, &CompileOptions::default());
    }
    // An unknown opcode: patch the first OpIAdd... use OpReturn's position: replace the
    // opcode of some instruction in the function body by an unknown one (0x7fff).
    let mut words = valid.clone();
    let mut i = 5;
    let mut patched = false;
    while i < words.len() {
        let len = (words[i] >> 16) as usize;
        let op = words[i] & 0xffff;
        if op == 253 {
            // OpReturn -> unknown opcode 0x7ff0 with the same length.
            words[i] = (1 << 16) | 0x7ff0;
            patched = true;
            break;
        }
        i += len.max(1);
    }
    assert!(patched);
    let e = compile(&words, &CompileOptions::default()).err().unwrap();
    assert!(
        matches!(
            e.kind,
            CompileErrorKind::Malformed | CompileErrorKind::Unsupported
        ),
        "{e:?}"
    );
    assert!(!e.message.is_empty());
}

#[test]
fn unsupported_instruction_is_named() {
    use cranecl_jit::{compile, CompileErrorKind, CompileOptions};
    let words = spirv(
        r#"int get_image_dim_unused(void);
           kernel void k(global float* a) { a[get_global_id(0)] = (float)get_image_dim_unused(); }"#,
    );
    let e = compile(&words, &CompileOptions::default()).err().unwrap();
    assert_eq!(e.kind, CompileErrorKind::Unsupported);
    assert!(e.message.contains("get_image_dim_unused"), "{}", e.message);
}

/// `float` <-> `double` and `int` -> `double` conversions of whole sub-groups
/// (`cvtps2pd`/`cvtpd2ps`/`cvtdq2pd` on chunks, `lower::float_vec`): every lane, at
/// every width, including NaN, infinities, signed zeros, subnormals of both types,
/// `double`s that overflow or underflow a `float`, ties of the float rounding and
/// the extreme `int`s, against the host's `as` conversions.
#[test]
fn float_double_conversions_per_lane() {
    let src = r#"
kernel void cvt(global const float *x, global const double *d, double b,
                global double *up, global float *down, global float *mix,
                global const int *k, global double *fromint) {
  size_t i = get_global_id(0);
  up[i] = (double)x[i];
  down[i] = (float)d[i];
  mix[i] = x[i] * 0.75f + b;
  fromint[i] = (double)k[i] + (double)(int)i * 0.5;
}
"#;
    let mut xs: Vec<f32> = vec![
        0.0,
        -0.0,
        1.0,
        -1.5,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MIN_POSITIVE,
        f32::MIN_POSITIVE / 8.0,
        -f32::from_bits(1),
        f32::MAX,
        f32::MIN,
        3.0e-39,
        12345.678,
    ];
    let mut ds: Vec<f64> = vec![
        0.0,
        -0.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e300,
        -1e300,
        1e-300,
        f64::from(f32::MAX) * 1.0000001,
        f64::from(f32::MIN_POSITIVE) / 3.0,
        1.0 + f64::EPSILON,
        // Ties: halfway between two floats, to even.
        1.0 + 2f64.powi(-24),
        1.0 + 3.0 * 2f64.powi(-24),
        -(1.0 + 2f64.powi(-24)),
        0.1,
        std::f64::consts::PI,
    ];
    for i in 0..100 {
        xs.push((i as f32 * 0.37).sin() * 10f32.powi(i % 30 - 15));
        ds.push((i as f64 * 0.91).cos() * 10f64.powi(i % 90 - 45));
    }
    let n = xs.len().max(ds.len()) + 5;
    xs.resize(n, 2.5);
    ds.resize(n, -7.25);
    let b = 1.0e-9f64;
    let ks: Vec<i32> = (0..n as i32)
        .map(|i| match i % 5 {
            0 => i32::MIN + i,
            1 => i32::MAX - i,
            2 => -i * 7919,
            _ => i * 104_729,
        })
        .collect();
    for w in [4, 8, 16, 32] {
        let p = build_w(src, w);
        let k = kernel(&p, "cvt");
        let (mut x, mut d) = (xs.clone(), ds.clone());
        let mut up = vec![0f64; n];
        let mut down = vec![0f32; n];
        let mut mix = vec![0f32; n];
        let mut k_in = ks.clone();
        let mut fromint = vec![0f64; n];
        run(
            k,
            &[n],
            &[n],
            &[
                buf(&mut x),
                buf(&mut d),
                val(b),
                buf(&mut up),
                buf(&mut down),
                buf(&mut mix),
                buf(&mut k_in),
                buf(&mut fromint),
            ],
        );
        for i in 0..n {
            let same64 = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
            let same32 = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
            assert!(
                same64(up[i], f64::from(xs[i])),
                "w={w} up[{i}] = {} from {}",
                up[i],
                xs[i]
            );
            assert!(
                same32(down[i], ds[i] as f32),
                "w={w} down[{i}] = {} from {}",
                down[i],
                ds[i]
            );
            let want = (f64::from(xs[i] * 0.75) + b) as f32;
            assert!(
                same32(mix[i], want),
                "w={w} mix[{i}] = {}, host {want}",
                mix[i]
            );
            let want = f64::from(ks[i]) + i as f64 * 0.5;
            assert_eq!(fromint[i], want, "w={w} fromint[{i}] from {}", ks[i]);
        }
    }
}
