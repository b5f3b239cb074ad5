//! Division and remainder by constants of work-item indices used as addresses
//! (`ldata[o % K][o / K]`, the transpose through `__local` memory of pyopencl's scan and
//! radix sort): where the lanes of a sub-group share one quotient the driver accesses
//! memory through the uniform quotient and the affine remainder, checked at run time;
//! where they do not (the lanes cross a multiple of K, wrap past the type's end, or
//! run backwards across zero) it must go lane by lane. Every case is checked against
//! the same arithmetic on the host, with divisors that are and are not powers of two,
//! signed and unsigned, 32 and 64 bits (64-bit dividends above 2^32).

use cranecl_conformance::*;

/// A table whose entries differ, so a wrong index shows.
fn table(n: usize, mul: i64) -> Vec<i32> {
    (0..n as i64).map(|j| (j * mul + 5) as i32).collect()
}

/// Kernel for dividend type `t`: `o = (t)(gid * stride + off)`;
/// `out[2i] = ta[o % K + K]`, `out[2i+1] = tb[(o / K) & 1023]` (every index in range).
fn gather_source(t: &str, k: i64, stride: i64) -> String {
    format!(
        "kernel void g(global const int* ta, global const int* tb, global int* out, long off) {{\n\
         \x20   long i = get_global_id(0);\n\
         \x20   {t} o = ({t})(i * {stride}L + off);\n\
         \x20   out[2 * i] = ta[o % ({t}){k} + {k}];\n\
         \x20   out[2 * i + 1] = tb[(o / ({t}){k}) & 1023];\n\
         }}\n"
    )
}

/// `wrap`: the dividend type's wrapping of an i64; `div`/`rem`: its division.
struct IntType {
    name: &'static str,
    wrap: fn(i64) -> i64,
    div: fn(i64, i64) -> i64,
    rem: fn(i64, i64) -> i64,
}

const INT: IntType = IntType {
    name: "int",
    wrap: |x| x as i32 as i64,
    div: |a, d| a / d,
    rem: |a, d| a % d,
};
const UINT: IntType = IntType {
    name: "uint",
    wrap: |x| x as u32 as i64,
    div: |a, d| a / d,
    rem: |a, d| a % d,
};
const LONG: IntType = IntType {
    name: "long",
    wrap: |x| x,
    div: |a, d| a / d,
    rem: |a, d| a % d,
};
const ULONG: IntType = IntType {
    name: "ulong",
    wrap: |x| x,
    div: |a, d| ((a as u64) / (d as u64)) as i64,
    rem: |a, d| ((a as u64) % (d as u64)) as i64,
};

fn check_gather(ctx: &DeviceContext, t: &IntType, k: i64, stride: i64, offs: &[i64]) {
    let n = 512usize;
    let ta = table(2 * k as usize, 3);
    let tb = table(1024, 7);
    let kernel = ctx.kernel(&gather_source(t.name, k, stride), "", "g");
    let bta = ctx.buffer_from(&ta);
    let btb = ctx.buffer_from(&tb);
    let out = ctx.buffer_zeroed::<i32>(2 * n);
    for &off in offs {
        kernel
            .arg_buffer(0, &bta)
            .arg_buffer(1, &btb)
            .arg_buffer(2, &out)
            .arg(3, off);
        // Whole groups of 64 (full sub-groups: the checked path) and no local size.
        for local in [Some(64usize), None] {
            ctx.run(&kernel, &[n], local.as_ref().map(std::slice::from_ref));
            let got = ctx.read::<i32>(&out, 2 * n);
            for i in 0..n {
                let o = (t.wrap)((i as i64).wrapping_mul(stride).wrapping_add(off));
                // The remainder read as the dividend type, then widened as C does
                // (int: sign extension; uint/ulong: non-negative).
                let r = (t.wrap)((t.rem)(o, k));
                let q = (t.wrap)((t.div)(o, k));
                let want = [ta[(r + k) as usize], tb[(q & 1023) as usize]];
                assert_eq!(
                    [got[2 * i], got[2 * i + 1]],
                    want,
                    "{} K={k} stride={stride} off={off} item {i}: o={o} (o%K={r}, o/K={q})",
                    t.name
                );
            }
        }
    }
}

/// Offsets that put sub-groups on both sides of zero, next to multiples of K, and
/// (for 32-bit types) across the type's wrap; 64-bit ones above 2^32.
fn offsets(bits: u32) -> Vec<i64> {
    let mut v = vec![0, -200, -3, 5, 1000];
    if bits == 32 {
        v.extend([i64::from(i32::MAX) - 20, i64::from(u32::MAX) - 20]);
    } else {
        v.extend([(1i64 << 33) + 7, -(1i64 << 35) - 9, i64::MAX - 5000]);
    }
    v
}

#[test]
fn signed_division_of_indices_by_constants() {
    let ctx = DeviceContext::new();
    for k in [256, 24, 7] {
        for stride in [1, -1, 3] {
            check_gather(&ctx, &INT, k, stride, &offsets(32));
            check_gather(&ctx, &LONG, k, stride, &offsets(64));
        }
    }
}

#[test]
fn unsigned_division_of_indices_by_constants() {
    let ctx = DeviceContext::new();
    for k in [256, 24] {
        for stride in [1, -1, 3] {
            check_gather(&ctx, &UINT, k, stride, &offsets(32));
            check_gather(&ctx, &ULONG, k, stride, &offsets(64));
        }
    }
}

/// pyopencl's transpose through `__local` memory: unit of K*16 values read as
/// `ldata[o % K][o / K]` (o = k*16 + lid), written back read as `ldata[o / 16][o % 16]`.
fn transpose_source(k: usize) -> String {
    format!(
        "kernel __attribute__((reqd_work_group_size(16, 1, 1)))\n\
         void t(global const int* in, global int* out) {{\n\
         \x20   local int ld[{k} + 1][17];\n\
         \x20   int base = (int)get_group_id(0) * {k} * 16;\n\
         \x20   for (int j = 0; j < {k}; j++) {{\n\
         \x20       int o = j * 16 + (int)get_local_id(0);\n\
         \x20       ld[o % {k}][o / {k}] = in[base + o];\n\
         \x20   }}\n\
         \x20   barrier(CLK_LOCAL_MEM_FENCE);\n\
         \x20   for (int j = 0; j < {k}; j++) {{\n\
         \x20       int o = j * 16 + (int)get_local_id(0);\n\
         \x20       out[base + o] = ld[o / 16][o % 16];\n\
         \x20   }}\n\
         }}\n"
    )
}

#[test]
fn transpose_through_local_memory() {
    let ctx = DeviceContext::new();
    for k in [256usize, 24, 40] {
        let groups = 5usize;
        let n = groups * k * 16;
        let input: Vec<i32> = (0..n as i32).map(|x| x * 13 - 7).collect();
        let kernel = ctx.kernel(&transpose_source(k), "", "t");
        let inb = ctx.buffer_from(&input);
        let out = ctx.buffer_zeroed::<i32>(n);
        kernel.arg_buffer(0, &inb).arg_buffer(1, &out);
        ctx.run(&kernel, &[groups * 16], Some(&[16usize][..]));
        let got = ctx.read::<i32>(&out, n);
        for g in 0..groups {
            for o in 0..k * 16 {
                // ld[r][c] holds in[c*K + r]; out[o] reads r = o/16, c = o%16.
                let want = input[g * k * 16 + (o % 16) * k + o / 16];
                assert_eq!(got[g * k * 16 + o], want, "K={k} group {g} o={o}");
            }
        }
    }
}
