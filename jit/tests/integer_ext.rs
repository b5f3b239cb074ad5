//! cl_khr_extended_bit_ops (bitfield_insert, bitfield_extract_signed/unsigned,
//! bit_reverse) and cl_khr_integer_dot_product (dot, dot_acc_sat on char4/uchar4 and
//! packed 4x8-bit) through clang-22 and the jit, against host references over every
//! offset/count pair and the saturation edges.

mod common;
use common::*;

const EXT: &str = ",+cl_khr_extended_bit_ops,+cl_khr_integer_dot_product,+__opencl_c_integer_dot_product_input_4x8bit,+__opencl_c_integer_dot_product_input_4x8bit_packed";

fn build_ext(src: &str) -> cranecl_jit::CompiledProgram {
    let words = spirv_ext(src, EXT);
    match cranecl_jit::compile(&words, &cranecl_jit::CompileOptions::default()) {
        Ok(p) => p,
        Err(e) => panic!("compile failed ({:?}): {}", e.kind, e.message),
    }
}

/// Every (offset, count) with offset + count <= bits, as two parallel lists.
fn fields(bits: u32) -> (Vec<u32>, Vec<u32>) {
    let mut offs = Vec::new();
    let mut cnts = Vec::new();
    for o in 0..=bits {
        for c in 0..=bits - o {
            offs.push(o);
            cnts.push(c);
        }
    }
    (offs, cnts)
}

fn low_mask(count: u32) -> u64 {
    if count >= 64 {
        u64::MAX
    } else {
        (1u64 << count) - 1
    }
}

fn ref_insert(base: u64, insert: u64, off: u32, cnt: u32, bits: u32) -> u64 {
    let m = low_mask(cnt).checked_shl(off).unwrap_or(0);
    ((base & !m) | (insert.checked_shl(off).unwrap_or(0) & m)) & low_mask(bits)
}

fn ref_extract(base: u64, off: u32, cnt: u32, bits: u32, signed: bool) -> u64 {
    if cnt == 0 {
        return 0;
    }
    let f = (base >> off) & low_mask(cnt);
    let v = if signed && (f >> (cnt - 1)) & 1 == 1 {
        f | !low_mask(cnt)
    } else {
        f
    };
    v & low_mask(bits)
}

/// A deterministic pseudo-random 64-bit value.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// bitfield_* and bit_reverse for one integer type, with varying offsets and counts.
macro_rules! bit_ops_case {
    ($name:ident, $ty:ty, $cl:literal, $scl:literal, $bits:expr) => {
        #[test]
        fn $name() {
            let src = format!(
                r#"
kernel void k(global {t}* base, global {t}* ins, global const uint* off, global const uint* cnt,
              global {t}* o_ins, global {t}* o_u, global {s}* o_s, global {t}* o_rev) {{
  size_t i = get_global_id(0);
  o_ins[i] = bitfield_insert(base[i], ins[i], off[i], cnt[i]);
  o_u[i] = bitfield_extract_unsigned(base[i], off[i], cnt[i]);
  o_s[i] = bitfield_extract_signed(base[i], off[i], cnt[i]);
  o_rev[i] = bit_reverse(base[i]);
}}
"#,
                t = $cl,
                s = $scl
            );
            let p = build_ext(&src);
            let k = kernel(&p, "k");
            let bits: u32 = $bits;
            let (mut off, mut cnt) = fields(bits);
            // A multiple of the work-group size.
            while off.len() % 8 != 0 {
                off.push(0);
                cnt.push(0);
            }
            let n = off.len();
            let mut base: Vec<$ty> = (0..n).map(|i| mix(i as u64) as $ty).collect();
            let mut ins: Vec<$ty> = (0..n).map(|i| mix(1000 + i as u64) as $ty).collect();
            let mut o_ins = vec![0 as $ty; n];
            let mut o_u = vec![0 as $ty; n];
            let mut o_s = vec![0 as $ty; n];
            let mut o_rev = vec![0 as $ty; n];
            run(
                k,
                &[n],
                &[8],
                &[
                    buf(&mut base),
                    buf(&mut ins),
                    buf(&mut off),
                    buf(&mut cnt),
                    buf(&mut o_ins),
                    buf(&mut o_u),
                    buf(&mut o_s),
                    buf(&mut o_rev),
                ],
            );
            for i in 0..n {
                let (b, x, o, c) = (base[i] as u64, ins[i] as u64, off[i], cnt[i]);
                let b = b & low_mask(bits);
                let x = x & low_mask(bits);
                assert_eq!(
                    o_ins[i] as u64 & low_mask(bits),
                    ref_insert(b, x, o, c, bits),
                    "bitfield_insert({b:#x}, {x:#x}, {o}, {c})"
                );
                assert_eq!(
                    o_u[i] as u64 & low_mask(bits),
                    ref_extract(b, o, c, bits, false),
                    "bitfield_extract_unsigned({b:#x}, {o}, {c})"
                );
                assert_eq!(
                    o_s[i] as u64 & low_mask(bits),
                    ref_extract(b, o, c, bits, true),
                    "bitfield_extract_signed({b:#x}, {o}, {c})"
                );
                assert_eq!(o_rev[i], base[i].reverse_bits(), "bit_reverse({b:#x})");
            }
        }
    };
}

bit_ops_case!(bit_ops_uchar, u8, "uchar", "char", 8);
bit_ops_case!(bit_ops_short, i16, "short", "short", 16);
bit_ops_case!(bit_ops_uint, u32, "uint", "int", 32);
bit_ops_case!(bit_ops_ulong, u64, "ulong", "long", 64);

/// Vector operands with uniform offset and count (one field per launch argument).
#[test]
fn bit_ops_vector_uniform_field() {
    let src = r#"
kernel void k(global uint4* base, global uint4* ins, uint off, uint cnt,
              global uint4* o_ins, global int4* o_s) {
  size_t i = get_global_id(0);
  o_ins[i] = bitfield_insert(base[i], ins[i], off, cnt);
  o_s[i] = bitfield_extract_signed(base[i], off, cnt);
}
"#;
    let p = build_ext(src);
    let k = kernel(&p, "k");
    let n = 16;
    for (off, cnt) in [(0u32, 0u32), (0, 32), (5, 9), (31, 1), (12, 20)] {
        let mut base: Vec<u32> = (0..4 * n).map(|i| mix(i as u64) as u32).collect();
        let mut ins: Vec<u32> = (0..4 * n).map(|i| mix(77 + i as u64) as u32).collect();
        let mut o_ins = vec![0u32; 4 * n];
        let mut o_s = vec![0i32; 4 * n];
        run(
            k,
            &[n],
            &[8],
            &[
                buf(&mut base),
                buf(&mut ins),
                val(off),
                val(cnt),
                buf(&mut o_ins),
                buf(&mut o_s),
            ],
        );
        for i in 0..4 * n {
            let (b, x) = (u64::from(base[i]), u64::from(ins[i]));
            assert_eq!(u64::from(o_ins[i]), ref_insert(b, x, off, cnt, 32));
            assert_eq!(
                u64::from(o_s[i] as u32),
                ref_extract(b, off, cnt, 32, true),
                "extract_signed({b:#x}, {off}, {cnt})"
            );
        }
    }
}

/// Inputs that reach the extremes of every product and of the accumulators.
fn dot_inputs(n: usize) -> (Vec<u8>, Vec<u8>, Vec<i32>) {
    let special = [0u8, 1, 0x7f, 0x80, 0xff, 0x81, 0x7e, 2];
    let a: Vec<u8> = (0..4 * n)
        .map(|i| {
            if i < 4 * special.len() {
                special[i / 4]
            } else {
                mix(i as u64) as u8
            }
        })
        .collect();
    let b: Vec<u8> = (0..4 * n)
        .map(|i| {
            if i < 4 * special.len() {
                special[(i / 4 + i % 4) % special.len()]
            } else {
                mix(5000 + i as u64) as u8
            }
        })
        .collect();
    let acc_special = [
        0i32,
        i32::MAX,
        i32::MIN,
        i32::MAX - 1000,
        i32::MIN + 1000,
        -1,
        0x7fff_0000,
        -0x7fff_0000,
    ];
    let acc: Vec<i32> = (0..n)
        .map(|i| {
            acc_special
                .get(i % 16)
                .copied()
                .unwrap_or(mix(9 + i as u64) as i32)
        })
        .collect();
    (a, b, acc)
}

fn ref_dot(a: &[u8], b: &[u8], a_signed: bool, b_signed: bool) -> i64 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| {
            let x = if a_signed {
                i64::from(x as i8)
            } else {
                i64::from(x)
            };
            let y = if b_signed {
                i64::from(y as i8)
            } else {
                i64::from(y)
            };
            x * y
        })
        .sum()
}

#[test]
fn dot_products_4x8bit() {
    let src = r#"
kernel void k(global uchar4* ua, global uchar4* ub, global int* acc, global int* o) {
  size_t i = get_global_id(0);
  uchar4 a = ua[i], b = ub[i];
  char4 sa = as_char4(a), sb = as_char4(b);
  uint ap = as_uint(a), bp = as_uint(b);
  int c = acc[i];
  uint uc = as_uint(c);
  o[12 * i + 0] = dot(sa, sb);
  o[12 * i + 1] = as_int(dot(a, b));
  o[12 * i + 2] = dot(sa, b);
  o[12 * i + 3] = dot(a, sb);
  o[12 * i + 4] = dot_acc_sat(sa, sb, c);
  o[12 * i + 5] = as_int(dot_acc_sat(a, b, uc));
  o[12 * i + 6] = dot_acc_sat(sa, b, c);
  o[12 * i + 7] = dot_4x8packed_ss_int(ap, bp);
  o[12 * i + 8] = as_int(dot_4x8packed_uu_uint(ap, bp));
  o[12 * i + 9] = dot_4x8packed_su_int(ap, bp);
  o[12 * i + 10] = dot_acc_sat_4x8packed_us_int(ap, bp, c);
  o[12 * i + 11] = as_int(dot_acc_sat_4x8packed_uu_uint(ap, bp, uc));
}
"#;
    let p = build_ext(src);
    let k = kernel(&p, "k");
    let n = 64;
    let (mut a, mut b, mut acc) = dot_inputs(n);
    let mut o = vec![0i32; 12 * n];
    run(
        k,
        &[n],
        &[8],
        &[buf(&mut a), buf(&mut b), buf(&mut acc), buf(&mut o)],
    );
    let sat_s = |v: i64| v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
    let sat_u = |v: i64| v.clamp(0, i64::from(u32::MAX)) as u32 as i32;
    for i in 0..n {
        let (x, y) = (&a[4 * i..4 * i + 4], &b[4 * i..4 * i + 4]);
        let c = i64::from(acc[i]);
        let uc = i64::from(acc[i] as u32);
        let want = [
            ref_dot(x, y, true, true) as i32,
            ref_dot(x, y, false, false) as i32,
            ref_dot(x, y, true, false) as i32,
            ref_dot(x, y, false, true) as i32,
            sat_s(ref_dot(x, y, true, true) + c),
            sat_u(ref_dot(x, y, false, false) + uc),
            sat_s(ref_dot(x, y, true, false) + c),
            ref_dot(x, y, true, true) as i32,
            ref_dot(x, y, false, false) as i32,
            ref_dot(x, y, true, false) as i32,
            sat_s(ref_dot(x, y, false, true) + c),
            sat_u(ref_dot(x, y, false, false) + uc),
        ];
        for (j, w) in want.iter().enumerate() {
            assert_eq!(
                o[12 * i + j],
                *w,
                "case {j} of a={x:?} b={y:?} acc={}",
                acc[i]
            );
        }
    }
}
