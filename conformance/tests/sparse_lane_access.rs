//! Loads and stores of a few work-items of a sub-group, at scattered addresses, as
//! boundary code does (`if (lx == 0) tile[..] = in[..]`): cranelift runs them in a
//! loop over the active work-items only. Checked against the host for every
//! element type the loop handles, one to three active work-items per sub-group,
//! and a store of several work-items to one address (what stays is one of theirs).

use cranecl_conformance::*;

const SRC: &str = r#"
#define SPARSE(T, NAME)                                                        \
kernel void NAME(global const T *in, global T *out, uint n) {                  \
    uint g = get_global_id(0);                                                 \
    if (g < n && (g % 8u == 3u || g % 13u == 0u || g % 16u == 15u)) {          \
        uint src = (g * 7u + 5u) % n;                                          \
        out[(g * 3u) % n] = in[src];                                           \
    }                                                                          \
}
SPARSE(uchar, sp_uchar)
SPARSE(short, sp_short)
SPARSE(int, sp_int)
SPARSE(long, sp_long)
SPARSE(float, sp_float)
SPARSE(float2, sp_float2)

kernel void one_place(global const int *in, global int *out) {
    uint g = get_global_id(0);
    uint lane = get_local_id(0) % 8u;
    if (lane == 2u || lane == 5u)
        out[get_group_id(0)] = in[g];
}
"#;

fn host_sparse<T: Copy>(input: &[T], out: &mut [T]) {
    let n = input.len() as u32;
    for g in 0..n {
        if g % 8 == 3 || g % 13 == 0 || g % 16 == 15 {
            out[((g * 3) % n) as usize] = input[((g * 7 + 5) % n) as usize];
        }
    }
}

fn check<T>(ctx: &DeviceContext, program: &Program, name: &str, input: Vec<T>)
where
    T: Pod + PartialEq + std::fmt::Debug,
{
    let n = input.len();
    let inb = ctx.buffer_from(&input);
    let init: Vec<T> = vec![T::default(); n];
    let out = ctx.buffer_from(&init);
    let k = program.kernel(name);
    k.arg_buffer(0, &inb).arg_buffer(1, &out).arg(2, n as u32);
    ctx.run(&k, &[1024], Some(&[64]));
    let mut want = init.clone();
    host_sparse(&input, &mut want);
    assert_eq!(ctx.read::<T>(&out, n), want, "{name}");
}

#[test]
fn scattered_accesses_of_few_work_items_agree_with_the_host() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SRC, "");
    // n is prime: (g * 3) % n differs for distinct g < n.
    let n: i32 = 1021;
    check(
        &ctx,
        &program,
        "sp_uchar",
        (0..n).map(|i| (i * 37 % 251) as u8).collect(),
    );
    check(
        &ctx,
        &program,
        "sp_short",
        (0..n).map(|i| (i * 977) as i16).collect(),
    );
    check(
        &ctx,
        &program,
        "sp_int",
        (0..n).map(|i| i * -7919).collect(),
    );
    check(
        &ctx,
        &program,
        "sp_long",
        (0..n).map(|i| (i as i64) << 33 | 5).collect(),
    );
    check(
        &ctx,
        &program,
        "sp_float",
        (0..n).map(|i| i as f32 * 0.25 - 9.0).collect(),
    );
    check(
        &ctx,
        &program,
        "sp_float2",
        (0..n).map(|i| [i as f32, -(i as f32)]).collect(),
    );

    // Two work-items of each sub-group store to one place: one of their values stays.
    let groups = 16usize;
    let input: Vec<i32> = (0..64 * groups as i32).map(|i| i * 11 + 1).collect();
    let inb = ctx.buffer_from(&input);
    let out = ctx.buffer_zeroed::<i32>(groups);
    let k = program.kernel("one_place");
    k.arg_buffer(0, &inb).arg_buffer(1, &out);
    ctx.run(&k, &[64 * groups], Some(&[64]));
    for (gi, got) in ctx.read::<i32>(&out, groups).iter().enumerate() {
        let writers: Vec<i32> = (0..64)
            .filter(|l| l % 8 == 2 || l % 8 == 5)
            .map(|l| input[gi * 64 + l])
            .collect();
        assert!(
            writers.contains(got),
            "group {gi}: {got} was stored by nobody"
        );
    }
}

/// A Jacobi sweep staged in `__local` memory with a one-cell halo, the work-items on
/// a block's edges loading the halo (one active work-item per sub-group and edge:
/// the one-lane path of the loop). `jacobi_ragged` takes the work-group's real size,
/// so the grid need not be a multiple of the block (ragged groups, OpenCL C 3.0).
const STENCIL: &str = r#"
#define TX 16
#define TY 16
__kernel __attribute__((reqd_work_group_size(TX, TY, 1)))
void jacobi(__global const float* restrict in, __global float* restrict out,
            const int W, const int H)
{
    __local float tile[TY + 2][TX + 2];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int gx = get_global_id(0), gy = get_global_id(1);
    tile[ly + 1][lx + 1] = in[gy * W + gx];
    if (lx == 0)
        tile[ly + 1][0] = in[gy * W + max(gx - 1, 0)];
    if (lx == TX - 1)
        tile[ly + 1][TX + 1] = in[gy * W + min(gx + 1, W - 1)];
    if (ly == 0)
        tile[0][lx + 1] = in[max(gy - 1, 0) * W + gx];
    if (ly == TY - 1)
        tile[TY + 1][lx + 1] = in[min(gy + 1, H - 1) * W + gx];
    barrier(CLK_LOCAL_MEM_FENCE);
    float v;
    if (gx == 0 || gy == 0 || gx == W - 1 || gy == H - 1)
        v = tile[ly + 1][lx + 1];
    else
        v = 0.25f * (tile[ly][lx + 1] + tile[ly + 2][lx + 1] +
                     tile[ly + 1][lx] + tile[ly + 1][lx + 2]);
    out[gy * W + gx] = v;
}

__kernel void jacobi_ragged(__global const float* in, __global float* out,
                            const int W, const int H)
{
    __local float tile[TY + 2][TX + 2];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int lw = get_local_size(0), lh = get_local_size(1);
    const int gx = get_global_id(0), gy = get_global_id(1);
    tile[ly + 1][lx + 1] = in[gy * W + gx];
    if (lx == 0)
        tile[ly + 1][0] = in[gy * W + max(gx - 1, 0)];
    if (lx == lw - 1)
        tile[ly + 1][lx + 2] = in[gy * W + min(gx + 1, W - 1)];
    if (ly == 0)
        tile[0][lx + 1] = in[max(gy - 1, 0) * W + gx];
    if (ly == lh - 1)
        tile[ly + 2][lx + 1] = in[min(gy + 1, H - 1) * W + gx];
    barrier(CLK_LOCAL_MEM_FENCE);
    float v;
    if (gx == 0 || gy == 0 || gx == W - 1 || gy == H - 1)
        v = tile[ly + 1][lx + 1];
    else
        v = 0.25f * (tile[ly][lx + 1] + tile[ly + 2][lx + 1] +
                     tile[ly + 1][lx] + tile[ly + 1][lx + 2]);
    out[gy * W + gx] = v;
}
"#;

fn host_jacobi(g: &[f32], w: usize, h: usize) -> Vec<f32> {
    let mut out = g.to_vec();
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let s = g[(y - 1) * w + x] + g[(y + 1) * w + x] + g[y * w + x - 1] + g[y * w + x + 1];
            out[y * w + x] = 0.25 * s;
        }
    }
    out
}

#[test]
fn local_memory_stencil_with_halo_agrees_with_the_host() {
    let ctx = DeviceContext::new();
    for (name, options, w, h) in [
        ("jacobi", "", 48usize, 32usize),
        ("jacobi_ragged", "-cl-std=CL3.0", 40, 21),
        ("jacobi_ragged", "-cl-std=CL3.0", 17, 35),
    ] {
        let program = ctx.build(STENCIL, options);
        let g: Vec<f32> = (0..w * h)
            .map(|i| ((i * 7919) % 1000) as f32 * 0.01 - 3.0)
            .collect();
        let inb = ctx.buffer_from(&g);
        let out = ctx.buffer_zeroed::<f32>(w * h);
        let k = program.kernel(name);
        k.arg_buffer(0, &inb)
            .arg_buffer(1, &out)
            .arg(2, w as i32)
            .arg(3, h as i32);
        ctx.run(&k, &[w, h], Some(&[16, 16]));
        let got = ctx.read::<f32>(&out, w * h);
        let want = host_jacobi(&g, w, h);
        for (i, (a, b)) in got.iter().zip(&want).enumerate() {
            assert!(
                (a - b).abs() <= 1e-5 * b.abs().max(1.0),
                "{name} {w}x{h}: cell ({}, {}) = {a}, host {b}",
                i % w,
                i / w
            );
        }
    }
}
