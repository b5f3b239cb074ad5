//! Contiguous `__local` loads and stores by sub-groups with some lanes off
//! (`if (lid > 0) x = ldata[k][lid]`, pyopencl's scan): the driver may read the whole
//! span and write it back blended under the mask when the span lies inside the
//! work-group's `__local` block, else it goes lane by lane. Checked against the host:
//! the inactive lanes' elements keep their values, spans that start before the block
//! (`buf[lid - 1]` of the first sub-group) or end after it (`buf[lid + 1]` of the
//! last) read the right elements, for 1- to 8-byte elements, kernel-scope arrays and
//! `__local` arguments, and work-groups whose last sub-group is partial.

use cranecl_conformance::*;

/// The kernel for element type `t`: `buf` is `__local` (kernel scope with `n`
/// elements, or the argument `arg`).
fn source(t: &str, n: usize) -> String {
    format!(
        "kernel void m(global {t}* out, global const {t}* in, int lo, int hi, local {t}* arg,\n\
         \x20             int use_arg) {{\n\
         \x20   local {t} own[{n}];\n\
         \x20   local {t}* buf = use_arg ? arg : own;\n\
         \x20   int l = (int)get_local_id(0);\n\
         \x20   int g = (int)get_global_id(0);\n\
         \x20   buf[l] = in[g];\n\
         \x20   barrier(CLK_LOCAL_MEM_FENCE);\n\
         \x20   if (l % 3 != 1 && l >= lo && l < hi)\n\
         \x20       buf[l] = ({t})(buf[l] * 2 + 1);\n\
         \x20   barrier(CLK_LOCAL_MEM_FENCE);\n\
         \x20   {t} v = ({t})0;\n\
         \x20   if (l > 0)\n\
         \x20       v = buf[l - 1];\n\
         \x20   if (l + 1 < (int)get_local_size(0))\n\
         \x20       v = ({t})(v * 3 + buf[l + 1]);\n\
         \x20   out[2 * g] = v;\n\
         \x20   out[2 * g + 1] = buf[l];\n\
         }}\n"
    )
}

/// Host model of the kernel for one work-group of `n` items (values as f64: every
/// value here is an integer small enough to be exact, `wrap` narrows to the type).
fn model(input: &[f64], lo: i64, hi: i64, wrap: fn(f64) -> f64) -> Vec<f64> {
    let n = input.len();
    let mut buf: Vec<f64> = input.to_vec();
    for (l, b) in buf.iter_mut().enumerate() {
        let l = l as i64;
        if l % 3 != 1 && l >= lo && l < hi {
            *b = wrap(*b * 2.0 + 1.0);
        }
    }
    let mut out = Vec::with_capacity(2 * n);
    for l in 0..n {
        let mut v = 0.0;
        if l > 0 {
            v = buf[l - 1];
        }
        if l + 1 < n {
            v = wrap(v * 3.0 + buf[l + 1]);
        }
        out.push(v);
        out.push(buf[l]);
    }
    out
}

fn check<T: Pod + Copy + PartialEq + std::fmt::Debug>(
    t: &str,
    to: fn(f64) -> T,
    wrap: fn(f64) -> f64,
) {
    let ctx = DeviceContext::new();
    for local in [64usize, 24, 40] {
        let groups = 3usize;
        let n = local * groups;
        let kernel = ctx.kernel(&source(t, local), "", "m");
        let input: Vec<f64> = (0..n).map(|i| wrap((i as f64) * 5.0 - 37.0)).collect();
        let inb = ctx.buffer_from(&input.iter().map(|x| to(*x)).collect::<Vec<T>>());
        let out = ctx.buffer_zeroed::<T>(2 * n);
        for (lo, hi) in [(0i64, local as i64), (5, 19), (1, local as i64 - 1)] {
            for use_arg in [0i32, 1] {
                kernel
                    .arg_buffer(0, &out)
                    .arg_buffer(1, &inb)
                    .arg(2, lo as i32)
                    .arg(3, hi as i32)
                    .arg_local(4, local * std::mem::size_of::<T>())
                    .arg(5, use_arg);
                ctx.run(&kernel, &[n], Some(&[local][..]));
                let got = ctx.read::<T>(&out, 2 * n);
                for g in 0..groups {
                    let want = model(&input[g * local..(g + 1) * local], lo, hi, wrap);
                    for (j, w) in want.iter().enumerate() {
                        assert_eq!(
                            got[2 * g * local + j],
                            to(*w),
                            "{t} local {local} lo {lo} hi {hi} arg {use_arg} group {g} \
                             item {} ({})",
                            j / 2,
                            if j % 2 == 0 { "neighbours" } else { "own" }
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn int_and_long_elements() {
    check::<i32>("int", |x| x as i32, |x| x as i64 as i32 as f64);
    check::<i64>("long", |x| x as i64, |x| x);
}

#[test]
fn char_and_short_elements() {
    check::<i8>("char", |x| x as i64 as i8, |x| x as i64 as i8 as f64);
    check::<i16>("short", |x| x as i64 as i16, |x| x as i64 as i16 as f64);
}

#[test]
fn float_and_double_elements() {
    check::<f32>("float", |x| x as f32, |x| x);
    check::<f64>("double", |x| x, |x| x);
}

/// Struct members and a strided column of `__local` arrays (pyopencl's sort scans a
/// struct of four counters: `if (lid > 0) ldata[k][lid].c01 += ...`), updated and
/// read under partial masks.
const STRUCT_SOURCE: &str = "\
typedef struct { int a; int b; int c; int d; } quad;
kernel void s(global int* out, global const int* in, int lo) {
    local quad q[40];
    local int col[40 * 3 + 2];
    int l = (int)get_local_id(0);
    int g = (int)get_global_id(0);
    q[l].a = in[g]; q[l].b = in[g] * 2; q[l].c = in[g] * 3; q[l].d = in[g] * 4;
    col[3 * l] = in[g] - 1; col[3 * l + 1] = -5; col[3 * l + 2] = -6;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l % 3 != 1 && l >= lo) {
        q[l].b = q[l].b + q[l].a;
        q[l].d = q[l].c - q[l].d;
        col[3 * l] = col[3 * l] * 7;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int v = 0;
    if (l > lo)
        v = q[l - 1].b + q[l].d + col[3 * (l - 1)];
    out[5 * g] = v;
    out[5 * g + 1] = q[l].b;
    out[5 * g + 2] = q[l].d;
    out[5 * g + 3] = col[3 * l];
    out[5 * g + 4] = col[3 * l + 1] + col[3 * l + 2];
}
";

#[test]
fn struct_members_and_strided_columns() {
    let ctx = DeviceContext::new();
    let kernel = ctx.kernel(STRUCT_SOURCE, "", "s");
    for local in [40usize, 24, 12] {
        let groups = 3usize;
        let n = local * groups;
        let input: Vec<i32> = (0..n as i32).map(|i| i * 11 - 50).collect();
        let inb = ctx.buffer_from(&input);
        let out = ctx.buffer_zeroed::<i32>(5 * n);
        for lo in [0i32, 1, 5] {
            kernel.arg_buffer(0, &out).arg_buffer(1, &inb).arg(2, lo);
            ctx.run(&kernel, &[n], Some(&[local][..]));
            let got = ctx.read::<i32>(&out, 5 * n);
            for grp in 0..groups {
                let x = |l: usize| input[grp * local + l];
                let on = |l: usize| l % 3 != 1 && l as i32 >= lo;
                let b = |l: usize| if on(l) { 2 * x(l) + x(l) } else { 2 * x(l) };
                let d = |l: usize| if on(l) { 3 * x(l) - 4 * x(l) } else { 4 * x(l) };
                let c = |l: usize| if on(l) { (x(l) - 1) * 7 } else { x(l) - 1 };
                for l in 0..local {
                    let v = if l as i32 > lo {
                        b(l - 1) + d(l) + c(l - 1)
                    } else {
                        0
                    };
                    let want = [v, b(l), d(l), c(l), -11];
                    let at = 5 * (grp * local + l);
                    assert_eq!(
                        &got[at..at + 5],
                        &want,
                        "local {local} lo {lo} group {grp} item {l}"
                    );
                }
            }
        }
    }
}
