//! Intel-GPU style sub-group GEMM steps: eight accumulators per work-item updated from
//! `intel_sub_group_block_read` rows of B and `sub_group_broadcast`s of a row of A
//! with unrolled constant lane indices. Such a block is emitted chunk by chunk
//! (`jit::lower::chunk_major`), its broadcasts load the one lane they read
//! (`jit::lower::broadcast_load`), copied per chunk when no loop around them writes
//! memory. Checked against host products: float at sub-group sizes 16 and 8, double
//! at 8 (two chunks per color), a step that also shuffles across lanes, and a loop
//! that writes the broadcast row after reading it (whose loads must stay in order).

use cranecl_conformance::*;

const SOURCE: &str = r#"
#pragma OPENCL EXTENSION cl_intel_subgroups : enable
#ifdef USE_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double T;
typedef double8 T8;
#define READ(p) as_double(intel_sub_group_block_read_ul((const __global ulong *)(p)))
#define WRITE(p, v) intel_sub_group_block_write_ul((__global ulong *)(p), as_ulong(v))
#else
typedef float T;
typedef float8 T8;
#define READ(p) as_float(intel_sub_group_block_read((const __global uint *)(p)))
#define WRITE(p, v) intel_sub_group_block_write((__global uint *)(p), as_uint(v))
#endif

#define STEP(kk, bv) \
    acc = fma((T8)(sub_group_broadcast(a.s0, kk), sub_group_broadcast(a.s1, kk), \
                   sub_group_broadcast(a.s2, kk), sub_group_broadcast(a.s3, kk), \
                   sub_group_broadcast(a.s4, kk), sub_group_broadcast(a.s5, kk), \
                   sub_group_broadcast(a.s6, kk), sub_group_broadcast(a.s7, kk)), \
              (T8)(bv), acc)

/* C (M x N) = A (M x K) * B (K x N), row-major; a sub-group of SG owns 8 rows and SG
   columns of C; K is a multiple of SG. */
__attribute__((intel_reqd_sub_group_size(SG)))
__attribute__((reqd_work_group_size(SG, 1, 1)))
kernel void gemm(int N, int K, global const T *A, global const T *B, global T *C)
{
    int n0 = get_group_id(0) * SG, m0 = get_group_id(1) * 8;
    int lane = get_sub_group_local_id();
    T8 acc = (T8)(0);
    for (int k = 0; k < K; k += SG) {
        global const T *ap = A + m0 * K + k + lane;
        T8 a = (T8)(ap[0], ap[K], ap[2 * K], ap[3 * K], ap[4 * K], ap[5 * K], ap[6 * K],
                    ap[7 * K]);
        global const T *bp = B + k * N + n0;
        T b0 = READ(bp), b1 = READ(bp + N), b2 = READ(bp + 2 * N), b3 = READ(bp + 3 * N);
        T b4 = READ(bp + 4 * N), b5 = READ(bp + 5 * N), b6 = READ(bp + 6 * N);
        T b7 = READ(bp + 7 * N);
        STEP(0, b0); STEP(1, b1); STEP(2, b2); STEP(3, b3);
        STEP(4, b4); STEP(5, b5); STEP(6, b6); STEP(7, b7);
#if SG == 16
        T b8 = READ(bp + 8 * N), b9 = READ(bp + 9 * N), b10 = READ(bp + 10 * N);
        T b11 = READ(bp + 11 * N), b12 = READ(bp + 12 * N), b13 = READ(bp + 13 * N);
        T b14 = READ(bp + 14 * N), b15 = READ(bp + 15 * N);
        STEP(8, b8); STEP(9, b9); STEP(10, b10); STEP(11, b11);
        STEP(12, b12); STEP(13, b13); STEP(14, b14); STEP(15, b15);
#endif
#ifdef ROTATE
        /* Lane l's sums of the tile's first row move to lane l + 1: the other rows
           stay lane-local while this one mixes the sub-group's lanes. */
        acc.s0 = intel_sub_group_shuffle(acc.s0, (lane + SG - 1) % SG);
#endif
    }
    global T *cp = C + m0 * N + n0;
    WRITE(cp, acc.s0); WRITE(cp + N, acc.s1); WRITE(cp + 2 * N, acc.s2);
    WRITE(cp + 3 * N, acc.s3); WRITE(cp + 4 * N, acc.s4); WRITE(cp + 5 * N, acc.s5);
    WRITE(cp + 6 * N, acc.s6); WRITE(cp + 7 * N, acc.s7);
}

/* Each round reads the row, accumulates broadcasts of it and then, where the round's
   flag says so, increments the row: the broadcast loads of a round must read that
   round's values even though the loop's broadcast block itself writes nothing. */
__attribute__((intel_reqd_sub_group_size(SG)))
__attribute__((reqd_work_group_size(SG, 1, 1)))
kernel void rounds(global T *row, global const int *flags, global T *out, int n)
{
    int lane = get_sub_group_local_id();
    global T *p = row + get_group_id(0) * SG;
    T8 acc = (T8)(0);
    for (int t = 0; t < n; t++) {
        T x = p[lane];
        T y = (T)(lane + 1);
        acc = fma((T8)(sub_group_broadcast(x, 0), sub_group_broadcast(x, 1),
                       sub_group_broadcast(x, 2), sub_group_broadcast(x, 3),
                       sub_group_broadcast(x, 4), sub_group_broadcast(x, 5),
                       sub_group_broadcast(x, 6), sub_group_broadcast(x, 7)),
                  (T8)(y), acc);
        acc = fma((T8)(sub_group_broadcast(x, 8), sub_group_broadcast(x, 9),
                       sub_group_broadcast(x, 10), sub_group_broadcast(x, 11),
                       sub_group_broadcast(x, 12), sub_group_broadcast(x, 13),
                       sub_group_broadcast(x, 14), sub_group_broadcast(x, 15)),
                  (T8)(y * (T)2), acc);
        acc = fma((T8)(sub_group_broadcast(x, 15), sub_group_broadcast(x, 14),
                       sub_group_broadcast(x, 13), sub_group_broadcast(x, 12),
                       sub_group_broadcast(x, 11), sub_group_broadcast(x, 10),
                       sub_group_broadcast(x, 9), sub_group_broadcast(x, 8)),
                  (T8)(y * (T)3), acc);
        if (flags[t])
            p[lane] += (T)1;
    }
    vstore8(acc, get_global_id(0), out);
}
"#;

/// Host C = A * B for the `gemm` kernel; with `rotate`, the first row of each 8-row
/// tile has its lanes' sums rotated by one lane after each `sg`-step of K.
#[allow(clippy::too_many_arguments)]
fn host_gemm(
    m: usize,
    n: usize,
    k: usize,
    a: &[f64],
    b: &[f64],
    sg: usize,
    rotate: bool,
) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        // Per sub-group tile: the lanes' accumulators, rotated after each step.
        for tile in (0..n).step_by(sg) {
            let mut acc = vec![0.0; sg];
            for k0 in (0..k).step_by(sg) {
                for (l, acc) in acc.iter_mut().enumerate() {
                    for kk in 0..sg {
                        *acc += a[i * k + k0 + kk] * b[(k0 + kk) * n + tile + l];
                    }
                }
                if rotate && i % 8 == 0 {
                    acc.rotate_right(1);
                }
            }
            c[i * n + tile..i * n + tile + sg].copy_from_slice(&acc);
        }
    }
    c
}

/// Runs `gemm` on `a` and `b` ((m, n, k, sub-group size)); C starts as `unwritten`
/// (a NaN), so an element the kernel skips fails the comparison.
fn device_gemm<T: Pod>(
    ctx: &DeviceContext,
    kernel: &Kernel,
    (m, n, k, sg): (usize, usize, usize, usize),
    (a, b, unwritten): (&[T], &[T], T),
) -> Vec<T> {
    let (ba, bb) = (ctx.buffer_from(a), ctx.buffer_from(b));
    let bc = ctx.buffer_from(&vec![unwritten; m * n]);
    kernel
        .arg(0, n as i32)
        .arg(1, k as i32)
        .arg_buffer(2, &ba)
        .arg_buffer(3, &bb)
        .arg_buffer(4, &bc);
    ctx.run(kernel, &[n, m / 8], Some(&[sg, 1]));
    ctx.read(&bc, m * n)
}

fn run_gemm(sg: usize, double: bool, rotate: bool) {
    let ctx = DeviceContext::new();
    if !require(
        ctx.has_extension("cl_intel_subgroups"),
        "cl_intel_subgroups",
    ) || !require(ctx.sub_group_sizes().contains(&sg), "the sub-group size")
        || (double && !require(ctx.has_extension("cl_khr_fp64"), "cl_khr_fp64"))
    {
        return;
    }
    let options = format!(
        "-DSG={sg}{}{}",
        if double { " -DUSE_DOUBLE" } else { "" },
        if rotate { " -DROTATE" } else { "" }
    );
    let program = ctx.build(SOURCE, &options);
    let kernel = program.kernel("gemm");
    let (m, n, k) = (24usize, 3 * sg, 4 * sg);
    let a: Vec<f64> = (0..m * k)
        .map(|i| ((i * 7 % 19) as f64) * 0.25 - 2.0)
        .collect();
    let b: Vec<f64> = (0..k * n)
        .map(|i| ((i * 5 % 23) as f64) * 0.125 - 1.0)
        .collect();
    let want = host_gemm(m, n, k, &a, &b, sg, rotate);
    let got: Vec<f64> = if double {
        device_gemm(&ctx, &kernel, (m, n, k, sg), (&a, &b, f64::NAN))
    } else {
        let narrow = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
        let (af, bf) = (narrow(&a), narrow(&b));
        let c: Vec<f32> = device_gemm(&ctx, &kernel, (m, n, k, sg), (&af, &bf, f32::NAN));
        c.into_iter().map(f64::from).collect()
    };
    // Inputs are multiples of 1/8 and 1/4 with small sums: exact in float and double.
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g,
            w,
            "sg {sg} double {double} rotate {rotate}: C[{}][{}]",
            i / n,
            i % n
        );
    }
}

#[test]
fn float_gemm_at_sub_group_16() {
    run_gemm(16, false, false);
}

#[test]
fn float_gemm_at_sub_group_8() {
    run_gemm(8, false, false);
}

#[test]
fn double_gemm_at_sub_group_8() {
    run_gemm(8, true, false);
}

#[test]
fn gemm_step_that_shuffles_across_lanes() {
    run_gemm(16, false, true);
}

#[test]
fn broadcast_row_rewritten_in_some_rounds() {
    let ctx = DeviceContext::new();
    let sg = 16usize;
    if !require(
        ctx.has_extension("cl_intel_subgroups"),
        "cl_intel_subgroups",
    ) || !require(ctx.sub_group_sizes().contains(&sg), "sub-group size 16")
    {
        return;
    }
    let program = ctx.build(SOURCE, "-DSG=16");
    let kernel = program.kernel("rounds");
    let groups = 3usize;
    let flags: Vec<i32> = vec![1, 0, 1, 1, 0, 1];
    let rounds = flags.len();
    let row: Vec<f32> = (0..groups * sg).map(|i| (i % 11) as f32 - 3.0).collect();
    let (brow, bflags) = (ctx.buffer_from(&row), ctx.buffer_from(&flags));
    let bout = ctx.buffer_zeroed::<f32>(8 * groups * sg);
    kernel
        .arg_buffer(0, &brow)
        .arg_buffer(1, &bflags)
        .arg_buffer(2, &bout)
        .arg(3, rounds as i32);
    ctx.run(&kernel, &[groups * sg], Some(&[sg]));
    let out: Vec<f32> = ctx.read(&bout, 8 * groups * sg);
    let after: Vec<f32> = ctx.read(&brow, groups * sg);
    // Round t reads row + (increments in rounds before t).
    let added: Vec<f32> = (0..rounds)
        .map(|t| flags[..t].iter().sum::<i32>() as f32)
        .collect();
    for g in 0..groups {
        let x = |t: usize, j: usize| row[g * sg + j] + added[t];
        for lane in 0..sg {
            let item = g * sg + lane;
            let y = (lane + 1) as f32;
            for j in 0..8 {
                let want: f32 = (0..rounds)
                    .map(|t| x(t, j) * y + x(t, 8 + j) * 2.0 * y + x(t, 15 - j) * 3.0 * y)
                    .sum();
                assert_eq!(out[8 * item + j], want, "item {item} component {j}");
            }
            let increments = flags.iter().sum::<i32>() as f32;
            assert_eq!(after[item], row[item] + increments, "row[{item}]");
        }
    }
}
