//! Values computed before a barrier from kernel arguments, constants and work-item
//! ids (integer and address arithmetic) are computed again after it instead of
//! kept in memory across it (`jit::lower::barrier_remat`); values read from memory
//! keep their home. Checked against the host: a tiled transpose whose indices and
//! row pointers cross the barrier, ids of every shape (uniform, lane-affine,
//! varying, 64-bit, pointers) read after two barriers and in a loop of barriers,
//! reads after barriers inside a branch some work-items skip, and values loaded
//! before the barrier from `__local` memory that is rewritten before they are used.

use cranecl_conformance::*;

const SRC: &str = r#"
#define TDIM 16
kernel void transpose(global const float *in, global float *out, int w, int h) {
    local float tile[TDIM][TDIM + 1];
    int lx = get_local_id(0), ly = get_local_id(1);
    int x = get_group_id(0) * TDIM + lx;
    int y = get_group_id(1) * TDIM + ly;
    global float *dst = out + (size_t)(get_group_id(0) * TDIM + ly) * h
                        + get_group_id(1) * TDIM + lx;
    tile[ly][lx] = in[y * w + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    *dst = tile[lx][ly];
}

kernel void shapes(global const int *in, global long *out, local int *scratch, int k) {
    size_t g = get_global_id(0);
    int lid = get_local_id(0), grp = get_group_id(0);
    int affine = (int)g * 3 + k;
    int uniform = grp * 1000 + k;
    int varying = (lid ^ 5) * (lid & 3);
    long wide = ((long)g << 33) + (long)k * 7;
    global long *row = out + g * 6;
    int loaded = in[g] + lid;
    scratch[lid] = loaded;
    barrier(CLK_LOCAL_MEM_FENCE);
    int next = scratch[(lid + 1) % get_local_size(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    row[0] = affine + next;
    row[1] = uniform;
    row[2] = varying;
    row[3] = wide;
    row[4] = loaded;
    row[5] = (long)(row - out);
}

kernel void rounds(global int *out, local int *acc, int n, int k) {
    int lid = get_local_id(0), lsz = get_local_size(0);
    size_t g = get_global_id(0);
    int base = (int)g * k + get_group_id(0);
    global int *dst = out + g;
    int sum = 0;
    for (int r = 0; r < n; r++) {
        acc[lid] = base + r;
        barrier(CLK_LOCAL_MEM_FENCE);
        sum += acc[(lid + r) % lsz] ^ base;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *dst = sum + base;
}

kernel void branchy(global int *out, local int *tmp, int k) {
    int lid = get_local_id(0);
    size_t g = get_global_id(0);
    int key = (int)g * 5 + k;
    global int *dst = out + 2 * g;
    tmp[lid] = key;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid % 3 == 0)
        dst[0] = key + tmp[lid ^ 1];
    else
        dst[1] = key - lid;
}

kernel void rewritten(global int *out, local int *tile) {
    int lid = get_local_id(0);
    tile[lid] = lid * 10;
    barrier(CLK_LOCAL_MEM_FENCE);
    int before = tile[lid ^ 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    tile[lid] = -1;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = before + tile[lid ^ 2];
}
"#;

#[test]
fn tiled_transpose_with_indices_across_the_barrier() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SRC, "-cl-std=CL3.0");
    let k = program.kernel("transpose");
    for (w, h) in [(64usize, 48usize), (16, 16), (128, 32)] {
        let input: Vec<f32> = (0..w * h).map(|i| i as f32 * 0.5 - 7.0).collect();
        let inb = ctx.buffer_from(&input);
        let out = ctx.buffer_zeroed::<f32>(w * h);
        k.arg_buffer(0, &inb)
            .arg_buffer(1, &out)
            .arg(2, w as i32)
            .arg(3, h as i32);
        ctx.run(&k, &[w, h], Some(&[16, 16]));
        let expect: Vec<f32> = (0..w * h).map(|i| input[(i % h) * w + i / h]).collect();
        assert_eq!(ctx.read::<f32>(&out, w * h), expect, "{w} x {h}");
    }
}

#[test]
fn ids_of_every_shape_are_right_after_two_barriers() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SRC, "-cl-std=CL3.0");
    let kern = program.kernel("shapes");
    for (items, local, k) in [(512usize, 256usize, 11i32), (400, 200, -4), (186, 93, 0)] {
        let input: Vec<i32> = (0..items as i32).map(|i| i * i % 37 - 9).collect();
        let inb = ctx.buffer_from(&input);
        let out = ctx.buffer_zeroed::<i64>(6 * items);
        kern.arg_buffer(0, &inb)
            .arg_buffer(1, &out)
            .arg_local(2, 4 * local)
            .arg(3, k);
        ctx.run(&kern, &[items], Some(&[local]));
        let mut expect = Vec::new();
        for g in 0..items {
            let (lid, grp) = ((g % local) as i32, (g / local) as i32);
            let loaded = |g: usize| input[g] + (g % local) as i32;
            let next = loaded(g - g % local + (g % local + 1) % local);
            expect.extend([
                (g as i32 * 3 + k + next) as i64,
                (grp * 1000 + k) as i64,
                ((lid ^ 5) * (lid & 3)) as i64,
                ((g as i64) << 33) + k as i64 * 7,
                loaded(g) as i64,
                6 * g as i64,
            ]);
        }
        assert_eq!(
            ctx.read::<i64>(&out, 6 * items),
            expect,
            "{items} items in groups of {local}, k = {k}"
        );
    }
}

#[test]
fn values_from_before_a_loop_of_barriers_are_right_in_every_round() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SRC, "-cl-std=CL3.0");
    let kern = program.kernel("rounds");
    for (items, local, n, k) in [
        (96usize, 32usize, 5i32, 3i32),
        (62, 31, 3, -7),
        (64, 64, 0, 2),
    ] {
        let out = ctx.buffer_zeroed::<i32>(items);
        kern.arg_buffer(0, &out)
            .arg_local(1, 4 * local)
            .arg(2, n)
            .arg(3, k);
        ctx.run(&kern, &[items], Some(&[local]));
        let base = |g: usize| g as i32 * k + (g / local) as i32;
        let expect: Vec<i32> = (0..items)
            .map(|g| {
                let (lid, first) = (g % local, g - g % local);
                let mut sum = 0i32;
                for r in 0..n {
                    let other = first + (lid + r as usize) % local;
                    sum += (base(other) + r) ^ base(g);
                }
                sum + base(g)
            })
            .collect();
        assert_eq!(
            ctx.read::<i32>(&out, items),
            expect,
            "{items} items in groups of {local}, n = {n}, k = {k}"
        );
    }
}

#[test]
fn values_read_after_a_barrier_inside_a_branch() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SRC, "-cl-std=CL3.0");
    let kern = program.kernel("branchy");
    for (items, local, k) in [(512usize, 256usize, 4i32), (400, 200, -2)] {
        let out = ctx.buffer_zeroed::<i32>(2 * items);
        kern.arg_buffer(0, &out).arg_local(1, 4 * local).arg(2, k);
        ctx.run(&kern, &[items], Some(&[local]));
        let key = |g: usize| g as i32 * 5 + k;
        let mut expect = vec![0i32; 2 * items];
        for g in 0..items {
            let (lid, first) = (g % local, g - g % local);
            if lid % 3 == 0 {
                // Even group sizes: the partner is always in the group.
                expect[2 * g] = key(g) + key(first + (lid ^ 1));
            } else {
                expect[2 * g + 1] = key(g) - lid as i32;
            }
        }
        assert_eq!(
            ctx.read::<i32>(&out, 2 * items),
            expect,
            "{items} items in groups of {local}, k = {k}"
        );
    }
}

#[test]
fn local_values_loaded_before_a_barrier_keep_what_they_read() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SRC, "-cl-std=CL3.0");
    let kern = program.kernel("rewritten");
    let (items, local) = (512usize, 256usize);
    let out = ctx.buffer_zeroed::<i32>(items);
    kern.arg_buffer(0, &out).arg_local(1, 4 * local);
    ctx.run(&kern, &[items], Some(&[local]));
    let expect: Vec<i32> = (0..items)
        .map(|g| ((g % local) as i32 ^ 1) * 10 - 1)
        .collect();
    assert_eq!(ctx.read::<i32>(&out, items), expect);
}
