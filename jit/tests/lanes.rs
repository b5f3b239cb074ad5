//! The lane model's affine rules under integer wrap-around: every rule that keeps a
//! value `base + lane * stride` symbolic (widening, right shifts, low masks,
//! truncation, access chains with narrow indices, comparisons, selects, division,
//! conversions to float, loop phis) is checked against a per-work-item evaluation on
//! the host, with bases placed so that the lanes of a sub-group cross the signed or
//! unsigned range of 8, 16, 32 and 64 bits at different lanes, at every sub-group
//! width, for full, partial and row-spanning sub-groups and large global offsets.

mod common;
use common::*;

/// What one work-item sees: its ids and the kernel's base arguments.
#[derive(Clone, Copy, Debug)]
struct Item {
    /// `(uint)get_global_id(0) + 1000u * (uint)get_global_id(1)`.
    x: u32,
    /// Dense index of the work-item in the ND-range.
    i: u64,
    /// `(uint)get_local_id(0)`.
    l: u32,
    b: i32,
    lb: i64,
}

impl Item {
    fn ub(&self) -> u32 {
        self.b as u32
    }
    fn lu(&self) -> u64 {
        self.lb as u64
    }
}

/// A rule: an OpenCL C expression of type ulong (over `x`, `i`, `l`, `b`, `ub`,
/// `lb`, `lu`) and the same computation on the host.
type Rule = (&'static str, fn(&Item) -> u64);

/// The C expressions avoid undefined behaviour (signed overflow, shifts of negative
/// values): wrapping arithmetic is done on unsigned types and converted.
const RULES: &[Rule] = &[
    // Widening of 32-bit values (the reported miscompile's class).
    ("(long)(int)(ub + x)", |t| {
        t.ub().wrapping_add(t.x) as i32 as i64 as u64
    }),
    ("(ulong)(ub + x)", |t| u64::from(t.ub().wrapping_add(t.x))),
    ("(ulong)(ub - 3u * x)", |t| {
        u64::from(t.ub().wrapping_sub(t.x.wrapping_mul(3)))
    }),
    ("(long)(int)(ub - 5u * x)", |t| {
        t.ub().wrapping_sub(t.x.wrapping_mul(5)) as i32 as i64 as u64
    }),
    ("(long)(int)(ub * 3u + x * 6u)", |t| {
        t.ub().wrapping_mul(3).wrapping_add(t.x.wrapping_mul(6)) as i32 as i64 as u64
    }),
    ("(long)(int)(l + ub)", |t| {
        t.l.wrapping_add(t.ub()) as i32 as i64 as u64
    }),
    ("(ulong)(x << 31)", |t| u64::from(t.x << 31)),
    ("(long)(int)(x << 30)", |t| (t.x << 30) as i32 as i64 as u64),
    // 8 and 16 bits.
    ("(long)(short)(ub + x)", |t| {
        t.ub().wrapping_add(t.x) as i16 as i64 as u64
    }),
    ("(ulong)(ushort)(ub + 7u * x)", |t| {
        u64::from(t.ub().wrapping_add(t.x.wrapping_mul(7)) as u16)
    }),
    ("(long)(char)(ub + 3u * x)", |t| {
        t.ub().wrapping_add(t.x.wrapping_mul(3)) as i8 as i64 as u64
    }),
    ("(ulong)(uchar)(ub - x)", |t| {
        u64::from(t.ub().wrapping_sub(t.x) as u8)
    }),
    ("(ulong)(int)(short)(ushort)(ub - 2u * x)", |t| {
        t.ub().wrapping_sub(t.x.wrapping_mul(2)) as u16 as i16 as i64 as u64
    }),
    ("(ulong)(uint)(uchar)(ub + 5u * x)", |t| {
        u64::from(t.ub().wrapping_add(t.x.wrapping_mul(5)) as u8)
    }),
    // Right shifts of strides divisible by 2^c, 32 and 64 bits.
    ("(ulong)((ub + 4u * x) >> 2)", |t| {
        u64::from(t.ub().wrapping_add(t.x.wrapping_mul(4)) >> 2)
    }),
    ("(long)((int)(ub + 8u * x) >> 3)", |t| {
        ((t.ub().wrapping_add(t.x.wrapping_mul(8)) as i32) >> 3) as i64 as u64
    }),
    ("(long)((int)(ub - 16u * x) >> 4)", |t| {
        ((t.ub().wrapping_sub(t.x.wrapping_mul(16)) as i32) >> 4) as i64 as u64
    }),
    ("(lu + ((ulong)x << 32)) >> 32", |t| {
        t.lu().wrapping_add(u64::from(t.x) << 32) >> 32
    }),
    ("(ulong)((long)(lu + ((ulong)x << 32)) >> 30)", |t| {
        (t.lu().wrapping_add(u64::from(t.x) << 32) as i64 >> 30) as u64
    }),
    ("(ulong)((long)(lu - ((ulong)x << 33)) >> 33)", |t| {
        (t.lu().wrapping_sub(u64::from(t.x) << 33) as i64 >> 33) as u64
    }),
    ("(ulong)((long)((ulong)i << 32) >> 32)", |t| {
        ((t.i << 32) as i64 >> 32) as u64
    }),
    ("(ulong)(((ushort)(ub + 2u * x)) >> 1)", |t| {
        u64::from(t.ub().wrapping_add(t.x.wrapping_mul(2)) as u16 >> 1)
    }),
    // Low-bit masks.
    ("(ulong)((ub + x) & 0xffffu)", |t| {
        u64::from(t.ub().wrapping_add(t.x) & 0xffff)
    }),
    ("(lu + x) & 0xfffffffful", |t| {
        t.lu().wrapping_add(u64::from(t.x)) & 0xffff_ffff
    }),
    ("(ulong)((ub + 3u * x) & 0xfu)", |t| {
        u64::from(t.ub().wrapping_add(t.x.wrapping_mul(3)) & 0xf)
    }),
    ("(ulong)((ub + 16u * x) & 0xfu)", |t| {
        u64::from(t.ub().wrapping_add(t.x.wrapping_mul(16)) & 0xf)
    }),
    ("(lu - 5ul * x) & 0x3fful", |t| {
        t.lu().wrapping_sub(u64::from(t.x).wrapping_mul(5)) & 0x3ff
    }),
    // Truncation (exact) and 64-bit arithmetic.
    ("(ulong)(uint)(lu + 5ul * x)", |t| {
        u64::from(t.lu().wrapping_add(u64::from(t.x).wrapping_mul(5)) as u32)
    }),
    ("(ulong)(uchar)(lu + x)", |t| {
        u64::from(t.lu().wrapping_add(u64::from(t.x)) as u8)
    }),
    ("lu + 3ul * (ulong)x", |t| {
        t.lu().wrapping_add(3 * u64::from(t.x))
    }),
    // Comparisons of affine values as masks, and selects.
    ("(ulong)((int)(ub + x) < 7)", |t| {
        u64::from((t.ub().wrapping_add(t.x) as i32) < 7)
    }),
    ("(ulong)((ub + x) < 5u)", |t| {
        u64::from(t.ub().wrapping_add(t.x) < 5)
    }),
    ("(ulong)((long)(lu + x) > 0)", |t| {
        u64::from(t.lu().wrapping_add(u64::from(t.x)) as i64 > 0)
    }),
    ("(ulong)((ushort)(ub + x) >= 0x8000u)", |t| {
        u64::from(t.ub().wrapping_add(t.x) as u16 >= 0x8000)
    }),
    (
        "((int)(ub + x) < 0) ? (ulong)(ub + x) : (ulong)(long)(int)(ub - x)",
        |t| {
            if (t.ub().wrapping_add(t.x) as i32) < 0 {
                u64::from(t.ub().wrapping_add(t.x))
            } else {
                t.ub().wrapping_sub(t.x) as i32 as i64 as u64
            }
        },
    ),
    // Division and remainder.
    ("(ulong)((ub + x) / 3u)", |t| {
        u64::from(t.ub().wrapping_add(t.x) / 3)
    }),
    ("(long)((int)(ub + x) / 5)", |t| {
        ((t.ub().wrapping_add(t.x) as i32).wrapping_div(5)) as i64 as u64
    }),
    ("(ulong)((ub + x) % 8u)", |t| {
        u64::from(t.ub().wrapping_add(t.x) % 8)
    }),
    ("(ulong)((long)(int)(ub + x) % 6)", |t| {
        ((t.ub().wrapping_add(t.x) as i32 as i64) % 6) as u64
    }),
    // Conversions to floating point.
    ("as_ulong((double)(int)(ub + x))", |t| {
        f64::from(t.ub().wrapping_add(t.x) as i32).to_bits()
    }),
    ("(ulong)as_uint((float)(ub + x))", |t| {
        u64::from((t.ub().wrapping_add(t.x) as f32).to_bits())
    }),
    ("as_ulong((double)(lu + x))", |t| {
        (t.lu().wrapping_add(u64::from(t.x)) as f64).to_bits()
    }),
    ("as_ulong((double)(long)(lu - x))", |t| {
        (t.lu().wrapping_sub(u64::from(t.x)) as i64 as f64).to_bits()
    }),
    // The reported case: clang's closed form of the loop widens `x - 2`.
    ("(ulong)(long)f((int)i)", |t| {
        let x = t.i as i32;
        (0..x).map(|k| k * x).sum::<i32>() as i64 as u64
    }),
    ("(ulong)(long)f((int)(l & 63u))", |t| {
        let x = (t.l & 63) as i32;
        (0..x).map(|k| k * x).sum::<i32>() as i64 as u64
    }),
];

/// Memory accesses through narrow, wrapping indices (loads, stores, vectors, a loop
/// whose pointer the compiler strength-reduces). `p` holds `P_LEN` ints.
const MEM_RULES: &[Rule] = &[
    ("(ulong)p[32768 + (short)(ub + x)]", |t| {
        u64::from(pv(
            (32768 + i64::from(t.ub().wrapping_add(t.x) as i16)) as usize
        ))
    }),
    ("(ulong)p[(ushort)(ub - x)]", |t| {
        u64::from(pv(usize::from(t.ub().wrapping_sub(t.x) as u16)))
    }),
    ("(ulong)p[128 + (char)(ub + 3u * x)]", |t| {
        u64::from(pv(
            (128 + i64::from(t.ub().wrapping_add(t.x.wrapping_mul(3)) as i8)) as usize,
        ))
    }),
    ("(ulong)p[(uint)(ushort)(ub + x) + 3u]", |t| {
        u64::from(pv(usize::from(t.ub().wrapping_add(t.x) as u16) + 3))
    }),
    ("(ulong)loop_sum(p, (ushort)(ub + x))", |t| {
        let k0 = usize::from(t.ub().wrapping_add(t.x) as u16);
        (0..4)
            .map(|k| pv(k0 + 1024 * k))
            .fold(0u32, |a, v| a.wrapping_add(v)) as u64
    }),
    // pyopencl's reduction loop: a 64-bit index from the zero-extended 32-bit local id
    // (`lid & 0xffffffff`), stepped in a loop whose lanes leave at different trips.
    (
        "(ulong)strided_sum(p, (ulong)(ub & 0x3ffu), l, 1500ul + (ulong)(ub & 0x3ffu))",
        |t| {
            let start = u64::from(t.ub() & 0x3ff);
            let stop = 1500 + start;
            let mut i = start + u64::from(t.l);
            let mut acc = 0u32;
            for _ in 0..4 {
                if i >= stop {
                    break;
                }
                acc = acc.wrapping_add(pv(i as usize));
                i += 64;
            }
            u64::from(acc)
        },
    ),
    (
        "(ulong)hsum(((global const uint4 *)p)[(uchar)(ub + x)])",
        |t| {
            let k = 4 * usize::from(t.ub().wrapping_add(t.x) as u8);
            (0..4).fold(0u32, |a, j| a.wrapping_add(pv(k + j))) as u64
        },
    ),
    ("(ulong)((global const uint2 *)p)[(uchar)(ub - x)].y", |t| {
        u64::from(pv(2 * usize::from(t.ub().wrapping_sub(t.x) as u8) + 1))
    }),
];

/// Ints in `p`.
const P_LEN: usize = 65536 + 4096;

/// The value of `p[k]`.
fn pv(k: usize) -> u32 {
    (k as u32).wrapping_mul(2_654_435_761) ^ 0x5bd1_e995
}

fn source() -> String {
    let mut s = String::from(
        r#"
int f(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * x; return s; }
uint loop_sum(global const uint *p, uint k) {
  uint acc = 0;
  for (int j = 0; j < 4; j++) acc += p[k + 1024 * j];
  return acc;
}
uint hsum(uint4 v) { return v.x + v.y + v.z + v.w; }
uint strided_sum(global const uint *p, ulong start, uint lid, ulong stop) {
  long i = start + lid;
  uint acc = 0;
  for (uint s = 0; s < 4; ++s) {
    if (i >= (long)stop)
      break;
    acc += p[i];
    i += 64;
  }
  return acc;
}
kernel void lanes(global ulong *out, global const uint *p, global uint *q, global uint *q2,
                  int b, long lb) {
  uint ub = (uint)b;
  ulong lu = (ulong)lb;
  ulong i = (get_global_id(1) - get_global_offset(1)) * get_global_size(0)
            + (get_global_id(0) - get_global_offset(0));
  uint x = (uint)get_global_id(0) + 1000u * (uint)get_global_id(1);
  uint l = (uint)get_local_id(0);
"#,
    );
    let n = RULES.len() + MEM_RULES.len();
    for (r, (e, _)) in RULES.iter().chain(MEM_RULES).enumerate() {
        s += &format!("  out[{n} * i + {r}] = {e};\n");
    }
    // Stores through wrapping 16-bit indices (each work-item its own element).
    s += "  q[32768 + (short)(ub + x)] = (uint)i + 1u;\n";
    s += "  q2[(ushort)(ub - 3u * x)] = (uint)i + 1u;\n";
    s += "}\n";
    s
}

/// One launch: (global size, local size, global offset) per dimension.
type Shape = (&'static [usize], &'static [usize], &'static [u64]);

/// Runs one launch and adds a line to `bad` for each rule with a wrong result (the
/// first wrong work-item).
fn check(
    w: u32,
    k: &cranecl_jit::CompiledKernel,
    shape: Shape,
    b: i32,
    lb: i64,
    bad: &mut std::collections::BTreeMap<String, String>,
) {
    let (global, local, offset) = shape;
    let items: usize = global.iter().product();
    let n = RULES.len() + MEM_RULES.len();
    let mut out = vec![0u64; n * items];
    // 16-byte aligned (the kernel reads uint4s), ints in little-endian order.
    let mut p: Vec<u128> = (0..P_LEN / 4)
        .map(|j| (0..4).fold(0u128, |a, m| a | u128::from(pv(4 * j + m)) << (32 * m)))
        .collect();
    let mut q = vec![0u32; 65536];
    let mut q2 = vec![0u32; 65536];
    run_offset(
        k,
        global,
        local,
        offset,
        &[
            buf(&mut out),
            buf(&mut p),
            buf(&mut q),
            buf(&mut q2),
            val(b),
            val(lb),
        ],
    );
    let mut want_q = vec![0u32; 65536];
    let mut want_q2 = vec![0u32; 65536];
    let gx = global[0];
    let gy = global.get(1).copied().unwrap_or(1);
    for y in 0..gy {
        for xi in 0..gx {
            let i = (y * gx + xi) as u64;
            let g0 = offset[0] + xi as u64;
            let g1 = offset.get(1).copied().unwrap_or(0) + y as u64;
            let t = Item {
                x: (g0 as u32).wrapping_add(1000u32.wrapping_mul(g1 as u32)),
                i,
                l: (xi % local[0]) as u32,
                b,
                lb,
            };
            for (r, (e, f)) in RULES.iter().chain(MEM_RULES).enumerate() {
                let got = out[n * i as usize + r];
                let want = f(&t);
                if got != want {
                    bad.entry(e.to_string()).or_insert_with(|| {
                        format!("W={w} shape={shape:?} b={b:#x} lb={lb:#x} {t:?}: {got:#x}, want {want:#x}")
                    });
                }
            }
            let k1 = (32768 + i64::from(t.ub().wrapping_add(t.x) as i16)) as usize;
            want_q[k1] = i as u32 + 1;
            let k2 = usize::from(t.ub().wrapping_sub(t.x.wrapping_mul(3)) as u16);
            want_q2[k2] = i as u32 + 1;
        }
    }
    for (name, got, want) in [("q", &q, &want_q), ("q2", &q2, &want_q2)] {
        if let Some(k) = (0..65536).find(|k| got[*k] != want[*k]) {
            bad.entry(format!("store {name}")).or_insert_with(|| {
                format!(
                    "W={w} shape={shape:?} b={b:#x}: {name}[{k}] = {}, want {}",
                    got[k], want[k]
                )
            });
        }
    }
}

#[test]
fn affine_rules_under_wrap_around() {
    let src = source();
    // Full sub-groups; partial sub-groups in ragged groups; one row that is not a
    // multiple of W; rows that sub-groups span (lanes not contiguous in x).
    let shapes: &[Shape] = &[
        (&[64], &[32], &[0]),
        (&[60], &[24], &[0]),
        (&[40], &[40], &[0]),
        (&[12, 5], &[6, 4], &[0, 0]),
        // (int)get_global_id(0) and (uint) wrap inside the range.
        (&[64], &[32], &[(1 << 31) - 21]),
        (&[60], &[24], &[(1 << 32) - 13]),
    ];
    // Bases that put a boundary (of 8, 16, 32 or 64 bits, signed or unsigned) a few
    // work-items into the range.
    let mut bases: Vec<(i32, i64)> = Vec::new();
    for t in [1i64, 6, 19] {
        bases.push(((i32::MAX as i64 - t + 1) as i32, i64::MAX - (t << 32) + 1));
        bases.push((-t as i32, -(t << 32)));
        bases.push(((0x7fff - t + 1) as i32, (t << 33) - 1));
        bases.push(((0x7f - t + 1) as i32, i64::MIN + t));
        bases.push(((0xffff - 3 * t) as i32, -t));
    }
    let mut bad = std::collections::BTreeMap::new();
    for w in [4u32, 8, 16, 32] {
        let p = build_w(&src, w);
        let k = kernel(&p, "lanes");
        assert_eq!(k.info.sub_group_width, w);
        for shape in shapes {
            for &(b, lb) in &bases {
                check(w, k, *shape, b, lb, &mut bad);
            }
        }
    }
    let report: Vec<String> = bad.iter().map(|(e, m)| format!("{e}: {m}")).collect();
    assert!(report.is_empty(), "wrong results:\n{}", report.join("\n"));
}
