//! Long straight-line arithmetic over loaded values (unrolled dot products), which
//! cranecl's lowering splits with scheduling checkpoints so that Cranelift keeps the
//! source order: tiled GEMMs in float and double (`__local` tiles, barriers, a fully
//! unrolled inner loop) and a divergent unrolled chain under partial sub-groups, each
//! against the host. Inputs are small integers, so every result is exact.

use cranecl_conformance::*;

const GEMM: &str = r#"
#ifdef DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double T;
#else
typedef float T;
#endif
#define TS 16
kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void gemm(int n, global const T* a, global const T* b, global T* c) {
    int lc = get_local_id(0), lr = get_local_id(1);
    int col = get_group_id(0) * TS + lc, row = get_group_id(1) * TS + lr;
    local T as[TS][TS], bs[TS][TS];
    T acc = 0, acc2 = 0;
    for (int t = 0; t < n / TS; t++) {
        as[lr][lc] = a[row * n + t * TS + lc];
        bs[lr][lc] = b[(t * TS + lr) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        #pragma unroll
        for (int k = 0; k < TS; k++) {
            acc += as[lr][k] * bs[k][lc];
            acc2 += as[k][lc] - bs[lr][k];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = acc * 2 + acc2;
}
"#;

/// Runs the GEMM kernel on `n` x `n` matrices of small integers against the host.
fn check_gemm(ctx: &DeviceContext, n: usize, double: bool) {
    let options = if double {
        "-cl-std=CL3.0 -DDOUBLE"
    } else {
        "-cl-std=CL3.0"
    };
    let program = ctx.build(GEMM, options);
    let a: Vec<f64> = (0..n * n).map(|i| ((i * 7 + 3) % 9) as f64 - 4.0).collect();
    let b: Vec<f64> = (0..n * n).map(|i| ((i * 5 + 1) % 7) as f64 - 3.0).collect();
    let mut expect = vec![0f64; n * n];
    for row in 0..n {
        for col in 0..n {
            let (mut acc, mut acc2) = (0.0, 0.0);
            for k in 0..n {
                acc += a[row * n + k] * b[k * n + col];
                // as[k][lc] - bs[lr][k] of tile t: a[(row0 + k) * n + t*16 + lc] and
                // b[(t*16 + lr) * n + col0 + k].
                let (t, kk) = (k / 16, k % 16);
                let (row0, col0) = (row / 16 * 16, col / 16 * 16);
                acc2 +=
                    a[(row0 + kk) * n + t * 16 + col % 16] - b[(t * 16 + row % 16) * n + col0 + kk];
            }
            expect[row * n + col] = acc * 2.0 + acc2;
        }
    }
    let k = program.kernel("gemm");
    if double {
        let ab = ctx.buffer_from(&a);
        let bb = ctx.buffer_from(&b);
        let cb = ctx.buffer_zeroed::<f64>(n * n);
        k.arg(0, n as i32)
            .arg_buffer(1, &ab)
            .arg_buffer(2, &bb)
            .arg_buffer(3, &cb);
        ctx.run(&k, &[n, n], Some(&[16, 16]));
        assert_eq!(ctx.read::<f64>(&cb, n * n), expect, "double gemm {n}");
    } else {
        let af: Vec<f32> = a.iter().map(|&x| x as f32).collect();
        let bf: Vec<f32> = b.iter().map(|&x| x as f32).collect();
        let ab = ctx.buffer_from(&af);
        let bb = ctx.buffer_from(&bf);
        let cb = ctx.buffer_zeroed::<f32>(n * n);
        k.arg(0, n as i32)
            .arg_buffer(1, &ab)
            .arg_buffer(2, &bb)
            .arg_buffer(3, &cb);
        ctx.run(&k, &[n, n], Some(&[16, 16]));
        let want: Vec<f32> = expect.iter().map(|&x| x as f32).collect();
        assert_eq!(ctx.read::<f32>(&cb, n * n), want, "float gemm {n}");
    }
}

#[test]
fn tiled_gemms_with_unrolled_inner_loops_compute_right() {
    let ctx = DeviceContext::new();
    check_gemm(&ctx, 64, false);
    check_gemm(&ctx, 48, true);
}

const CHAIN: &str = r#"
kernel void chain(global const float* a, global const int* idx, global float* out) {
    int i = get_global_id(0);
    if (i % 3 != 0) {
        float acc0 = 0.0f, acc1 = 0.0f, acc2 = 1.0f;
        #pragma unroll
        for (int k = 0; k < 40; k++) {
            acc0 = fma(a[idx[k] + i], (float)(k % 5), acc0);
            acc1 += a[i + k] * a[k];
            acc2 = a[i + 2 * k] - acc2;
        }
        out[i] = acc0 - 3.0f * acc1 + acc2;
    } else {
        out[i] = -1.0f;
    }
}
"#;

#[test]
fn divergent_unrolled_chains_under_partial_sub_groups_compute_right() {
    let ctx = DeviceContext::new();
    let program = ctx.build(CHAIN, "-cl-std=CL3.0");
    // 1000 work-items in groups of 40 (non-uniform against any sub-group width).
    let n = 1000;
    let a: Vec<f32> = (0..n + 100)
        .map(|i| ((i * 11 + 5) % 9) as f32 - 4.0)
        .collect();
    let idx: Vec<i32> = (0..40).map(|k| (k * 13) % 50).collect();
    let mut expect = vec![0f32; n];
    for (i, e) in expect.iter_mut().enumerate() {
        if i % 3 == 0 {
            *e = -1.0;
            continue;
        }
        let (mut acc0, mut acc1, mut acc2) = (0f64, 0f64, 1f64);
        for k in 0..40 {
            acc0 += f64::from(a[idx[k] as usize + i]) * (k % 5) as f64;
            acc1 += f64::from(a[i + k]) * f64::from(a[k]);
            acc2 = f64::from(a[i + 2 * k]) - acc2;
        }
        *e = (acc0 - 3.0 * acc1 + acc2) as f32;
    }
    let ab = ctx.buffer_from(&a);
    let ib = ctx.buffer_from(&idx);
    let out = ctx.buffer_zeroed::<f32>(n);
    let k = program.kernel("chain");
    k.arg_buffer(0, &ab).arg_buffer(1, &ib).arg_buffer(2, &out);
    ctx.run(&k, &[n], Some(&[40]));
    assert_eq!(ctx.read::<f32>(&out, n), expect);
}
