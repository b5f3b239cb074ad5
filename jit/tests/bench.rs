//! Single-threaded timings of the clbench workloads through the jit alone (ignored by
//! default): `cargo test --release -p cranecl-jit --test bench -- --ignored --nocapture`.

mod common;
use common::*;
use std::time::Instant;

fn time(name: &str, what: f64, unit: &str, mut f: impl FnMut()) {
    f();
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{name:>14}: {:8.3} ms  {:8.2} {unit}",
        best * 1e3,
        what / best / 1e9
    );
}

#[test]
#[ignore]
fn bench_workloads() {
    let vadd = build("kernel void vadd(global const float* a, global const float* b, global float* c) { size_t i = get_global_id(0); c[i] = a[i] + b[i]; }");
    let n = 1 << 22;
    let mut a = vec![1f32; n];
    let mut b = vec![2f32; n];
    let mut c = vec![0f32; n];
    time("vadd", (12 * n) as f64, "GB/s", || {
        run(
            kernel(&vadd, "vadd"),
            &[n],
            &[256],
            &[buf(&mut a), buf(&mut b), buf(&mut c)],
        )
    });

    let sg = build(
        r#"
#define TS 16
__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void sgemm_tiled(const int N, __global const float* restrict A, __global const float* restrict B, __global float* restrict C) {
    const int lc = get_local_id(0); const int lr = get_local_id(1);
    const int col = get_group_id(0) * TS + lc; const int row = get_group_id(1) * TS + lr;
    __local float As[TS][TS]; __local float Bs[TS][TS];
    float acc = 0.0f;
    const int ntiles = N / TS;
    for (int t = 0; t < ntiles; t++) {
        As[lr][lc] = A[row * N + t * TS + lc];
        Bs[lr][lc] = B[(t * TS + lr) * N + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TS; k++) acc += As[lr][k] * Bs[k][lc];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * N + col] = acc;
}
__kernel void sgemm_naive(const int N, __global const float* restrict A, __global const float* restrict B, __global float* restrict C) {
    const int col = get_global_id(0); const int row = get_global_id(1);
    float acc = 0.0f;
    for (int k = 0; k < N; k++) acc += A[row * N + k] * B[k * N + col];
    C[row * N + col] = acc;
}
"#,
    );
    let m = 256;
    let mut a = vec![1f32; m * m];
    let mut b = vec![2f32; m * m];
    let mut c = vec![0f32; m * m];
    for k in ["sgemm_tiled", "sgemm_naive"] {
        time(k, (2 * m * m * m) as f64, "GFLOP/s", || {
            run(
                kernel(&sg, k),
                &[m, m],
                &[16, 16],
                &[val(m as i32), buf(&mut a), buf(&mut b), buf(&mut c)],
            )
        });
    }

    let red = build(
        r#"
#define WG 256
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_local(__global const float* restrict in, __global float* restrict partial, const uint n) {
    __local float sdata[WG];
    const uint lid = get_local_id(0);
    const uint gsz = get_global_size(0);
    float s = 0.0f;
    for (uint i = get_global_id(0); i < n; i += gsz) s += in[i];
    sdata[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = WG / 2; off > 0; off >>= 1) {
        if (lid < off) sdata[lid] += sdata[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) partial[get_group_id(0)] = sdata[0];
}
"#,
    );
    let n = 1 << 22;
    let mut inp = vec![1f32; n];
    let mut part = vec![0f32; 16];
    time("reduce_local", (4 * n) as f64, "GB/s", || {
        run(
            kernel(&red, "reduce_local"),
            &[16 * 256],
            &[256],
            &[buf(&mut inp), buf(&mut part), val(n as u32)],
        )
    });

    let mandel = build(
        r#"
__kernel void mandelbrot(__global int* restrict out, const int width, const float x0, const float y0,
                         const float dx, const float dy, const int maxit) {
    const int px = get_global_id(0); const int py = get_global_id(1);
    const float cr = x0 + (float)px * dx; const float ci = y0 + (float)py * dy;
    float zr = 0.0f, zi = 0.0f; int it = 0;
    while (it < maxit && zr * zr + zi * zi <= 4.0f) {
        const float t = zr * zr - zi * zi + cr; zi = 2.0f * zr * zi + ci; zr = t; it++;
    }
    out[py * width + px] = it;
}
"#,
    );
    let w = 512;
    let mut out = vec![0i32; w * w];
    time("mandelbrot", (w * w) as f64 * 1e3, "Mpixel/s", || {
        run(
            kernel(&mandel, "mandelbrot"),
            &[w, w],
            &[16, 16],
            &[
                buf(&mut out),
                val(w as i32),
                val(-2.0f32),
                val(-1.5f32),
                val(3.0f32 / w as f32),
                val(3.0f32 / w as f32),
                val(256i32),
            ],
        )
    });
}
