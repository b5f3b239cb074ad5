//! Blocks that at most one work-item of a sub-group enters (`if (lx == c)` with an
//! affine `lx`), which the jit lowers as scalar code for that work-item's lane
//! (`jit::lower::single_lane`). Checked against the host: the lane found from a
//! switch case, from a uniform bound, from a stride of -1, from a stride of 3 (found from the
//! mask),
//! varying float, long, bool, char and short values read inside such a block, a value
//! defined there reaching a phi, and 1-D stencils whose halo of width 1 to 3 one
//! work-item loads, on work-group shapes with partial sub-groups, ragged work-groups
//! and shapes whose sub-groups span rows (where `lx` is not affine).

use cranecl_conformance::*;

const MIX: &str = r#"
kernel void sl_mix(global const float *in, global float *outf, global long *outl,
                   global int *outi, global float *outp, uint u, int k)
{
    int gx = get_global_id(0), gy = get_global_id(1);
    int g = gy * (int)get_global_size(0) + gx;
    int lx = get_local_id(0);
    int lw = get_local_size(0);
    float v = in[g] * 3.0f;
    long big = (long)g * 1000003L - 5;
    bool b = in[g] > 0.0f;
    outf[g] = -1.0f;
    outl[g] = -1;
    outi[g] = -1;
    if (lx == 0)
        outf[g] = v * 2.0f + (b ? 100.0f : 200.0f);
    if (lx == lw - 1)
        outl[g] = big + 7;
    if (lx == (int)u)
        outi[g] = (int)v + 1000;
    if (3 * lx == k)
        outf[g] = v + 0.5f;
    if (k - lx == 3)
        outi[g] = (char)(g & 0x7f) + (short)(g * 3);
    float t = 0.0f;
    if (lx == 5)
        t = in[(g + 1) % (int)(get_global_size(0) * get_global_size(1))] + v;
    outp[g] = t + 1.0f;
}
"#;

/// The host's answers of `sl_mix` for a `gw` x `gh` grid in `lw0` x `lh0` work-groups
/// (the last ones ragged): (outf, outl, outi, outp).
fn host_mix(
    input: &[f32],
    gw: usize,
    gh: usize,
    lw0: usize,
    u: u32,
    k: i32,
) -> (Vec<f32>, Vec<i64>, Vec<i32>, Vec<f32>) {
    let n = gw * gh;
    let (mut of, mut ol, mut oi, mut op) =
        (vec![0f32; n], vec![0i64; n], vec![0i32; n], vec![0f32; n]);
    for gy in 0..gh {
        for gx in 0..gw {
            let g = gy * gw + gx;
            let lx = (gx % lw0) as i32;
            let lw = lw0.min(gw - gx / lw0 * lw0) as i32;
            let v = input[g] * 3.0;
            let big = g as i64 * 1000003 - 5;
            let b = input[g] > 0.0;
            of[g] = -1.0;
            ol[g] = -1;
            oi[g] = -1;
            if lx == 0 {
                of[g] = v * 2.0 + if b { 100.0 } else { 200.0 };
            }
            if lx == lw - 1 {
                ol[g] = big + 7;
            }
            if lx == u as i32 {
                oi[g] = v as i32 + 1000;
            }
            if 3 * lx == k {
                of[g] = v + 0.5;
            }
            if k - lx == 3 {
                oi[g] = i32::from((g & 0x7f) as i8) + i32::from((g * 3) as i16);
            }
            let mut t = 0.0f32;
            if lx == 5 {
                t = input[(g + 1) % n] + v;
            }
            op[g] = t + 1.0;
        }
    }
    (of, ol, oi, op)
}

#[test]
fn single_lane_blocks_agree_with_the_host() {
    let ctx = DeviceContext::new();
    let program = ctx.build(MIX, "-cl-std=CL3.0");
    let k = program.kernel("sl_mix");
    // (global, local): full and partial sub-groups, ragged groups, rows of 12 (the
    // sub-groups span rows), 1-D and 2-D.
    let shapes: [([usize; 2], [usize; 2]); 7] = [
        ([64, 4], [16, 4]),
        ([37, 5], [16, 4]),
        ([40, 3], [20, 1]),
        ([36, 4], [12, 2]),
        ([24, 6], [8, 3]),
        ([100, 1], [32, 1]),
        ([45, 2], [9, 2]),
    ];
    for (global, local) in shapes {
        let (gw, gh) = (global[0], global[1]);
        let n = gw * gh;
        // Multiples of 1/4 of either sign: every product and sum below is exact.
        let input: Vec<f32> = (0..n)
            .map(|i| ((i * 7919 % 61) as f32 - 30.0) * 0.25)
            .collect();
        let inb = ctx.buffer_from(&input);
        for (u, kk) in [(0u32, 1i32), (3, 5), (7, 9), (11, 3), (15, 18)] {
            let outf = ctx.buffer_zeroed::<f32>(n);
            let outl = ctx.buffer_zeroed::<i64>(n);
            let outi = ctx.buffer_zeroed::<i32>(n);
            let outp = ctx.buffer_zeroed::<f32>(n);
            k.arg_buffer(0, &inb)
                .arg_buffer(1, &outf)
                .arg_buffer(2, &outl)
                .arg_buffer(3, &outi)
                .arg_buffer(4, &outp)
                .arg(5, u)
                .arg(6, kk);
            ctx.run(&k, &global, Some(&local));
            let (wf, wl, wi, wp) = host_mix(&input, gw, gh, local[0], u, kk);
            let at = format!("global {global:?} local {local:?} u {u} k {kk}");
            assert_eq!(ctx.read::<f32>(&outf, n), wf, "outf, {at}");
            assert_eq!(ctx.read::<i64>(&outl, n), wl, "outl, {at}");
            assert_eq!(ctx.read::<i32>(&outi, n), wi, "outi, {at}");
            assert_eq!(ctx.read::<f32>(&outp, n), wp, "outp, {at}");
        }
    }
}

/// A 1-D weighted stencil of radius R staged in `__local` memory: the first and the
/// last work-item of a group load the R halo cells on their side.
const STENCIL1D: &str = r#"
#define STENCIL(R, NAME)                                                       \
kernel void NAME(global const float *in, global float *out, int n) {           \
    local float tile[64 + 2 * R];                                              \
    int lx = get_local_id(0), ls = get_local_size(0);                          \
    int g = get_global_id(0);                                                  \
    tile[lx + R] = in[g];                                                      \
    if (lx == 0)                                                               \
        for (int r = 1; r <= R; r++)                                           \
            tile[R - r] = in[max(g - r, 0)];                                   \
    if (lx == ls - 1)                                                          \
        for (int r = 1; r <= R; r++)                                           \
            tile[lx + R + r] = in[min(g + r, n - 1)];                          \
    barrier(CLK_LOCAL_MEM_FENCE);                                              \
    float s = 0.0f;                                                            \
    for (int r = -R; r <= R; r++)                                              \
        s += tile[lx + R + r] * (float)(r + R + 1);                            \
    out[g] = s;                                                                \
}
STENCIL(1, st1)
STENCIL(2, st2)
STENCIL(3, st3)
"#;

#[test]
fn halos_of_one_to_three_cells_loaded_by_one_work_item_agree_with_the_host() {
    let ctx = DeviceContext::new();
    let program = ctx.build(STENCIL1D, "-cl-std=CL3.0");
    for (radius, name) in [(1i32, "st1"), (2, "st2"), (3, "st3")] {
        let k = program.kernel(name);
        for (n, local) in [
            (256usize, 64usize),
            (250, 32),
            (101, 20),
            (77, 24),
            (50, 12),
        ] {
            // Small integers: the weighted sums are exact.
            let input: Vec<f32> = (0..n).map(|i| (i * 37 % 23) as f32 - 11.0).collect();
            let inb = ctx.buffer_from(&input);
            let out = ctx.buffer_zeroed::<f32>(n);
            k.arg_buffer(0, &inb).arg_buffer(1, &out).arg(2, n as i32);
            ctx.run(&k, &[n], Some(&[local]));
            let want: Vec<f32> = (0..n as i32)
                .map(|g| {
                    let mut s = 0.0f32;
                    for r in -radius..=radius {
                        let at = (g + r).clamp(0, n as i32 - 1) as usize;
                        s += input[at] * (r + radius + 1) as f32;
                    }
                    s
                })
                .collect();
            assert_eq!(
                ctx.read::<f32>(&out, n),
                want,
                "{name}: n {n}, local size {local}"
            );
        }
    }
}

/// A 2-D Jacobi sweep in 16 x 4 tiles (`reqd_work_group_size`, so sub-groups of 16:
/// one per tile row) with its halo and border tests as divergent branches outside
/// any loop; on grids that are not multiples of the tile, the last work-groups are
/// ragged (OpenCL C 3.0): their rows are shorter than a sub-group.
const TILE16: &str = r#"
__kernel __attribute__((reqd_work_group_size(16, 4, 1)))
void jacobi16(__global const float* in, __global float* out, const int W, const int H)
{
    __local float tile[4 + 2][16 + 2];
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

#[test]
fn tiles_of_sixteen_with_halo_branches_agree_with_the_host() {
    let ctx = DeviceContext::new();
    let program = ctx.build(TILE16, "-cl-std=CL3.0");
    let k = program.kernel("jacobi16");
    for (w, h) in [(64usize, 16usize), (40, 21), (17, 6), (33, 9)] {
        // Small integers times 1/4: the sums are exact.
        let g: Vec<f32> = (0..w * h).map(|i| (i * 7919 % 41) as f32 * 0.25).collect();
        let inb = ctx.buffer_from(&g);
        let out = ctx.buffer_zeroed::<f32>(w * h);
        k.arg_buffer(0, &inb)
            .arg_buffer(1, &out)
            .arg(2, w as i32)
            .arg(3, h as i32);
        ctx.run(&k, &[w, h], Some(&[16, 4]));
        let mut want = g.clone();
        for y in 1..h - 1 {
            for x in 1..w - 1 {
                let s =
                    g[(y - 1) * w + x] + g[(y + 1) * w + x] + g[y * w + x - 1] + g[y * w + x + 1];
                want[y * w + x] = 0.25 * s;
            }
        }
        assert_eq!(ctx.read::<f32>(&out, w * h), want, "{w}x{h}");
    }
}
