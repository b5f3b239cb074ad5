//! Grid-stride loops in pyopencl's `ElementwiseKernel` form (`for (i = start + lid; i
//! < n; i += gsize)` with a `long` index), which run at sub-group width 16
//! (`jit::width::stride_loop`): results against the host for element counts that
//! leave partial sub-groups and idle work-items, a divergent branch in the body, and
//! the width the API reports for them (an induction variable stepped by a varying
//! amount keeps the default width).

use cranecl_conformance::consts::*;
use cranecl_conformance::*;

const ELEMENTWISE: &str = r#"
kernel void axpy(float a, global const float *x, global const float *y,
                 global float *z, long n)
{
    int lid = get_local_id(0);
    int gsize = get_global_size(0);
    int work_group_start = get_local_size(0) * get_group_id(0);
    long i;
    for (i = work_group_start + lid; i < n; i += gsize) {
        float v = a * x[i] + y[i];
        if (v > 1.5f)
            v = sqrt(v);
        z[i] = v;
    }
}

kernel void varying_step(global const int *x, global int *z, long n)
{
    long step = get_global_size(0) + (get_local_id(0) & 1);
    int s = 0;
    for (long i = get_global_id(0); i < n; i += step)
        s += x[i];
    z[get_global_id(0)] = s;
}
"#;

fn host_axpy(a: f32, x: f32, y: f32) -> f32 {
    let v = a.mul_add(x, y);
    if v > 1.5 {
        v.sqrt()
    } else {
        v
    }
}

#[test]
fn elementwise_stride_loop_matches_host() {
    let ctx = DeviceContext::new();
    let program = ctx.build(ELEMENTWISE, "");
    let k = program.kernel("axpy");
    for (n, groups, local) in [
        (100_000usize, 64usize, 128usize),
        (1000, 3, 128),
        (37, 2, 64),
        (5000, 7, 96),
        (16, 1, 32),
    ] {
        let x: Vec<f32> = (0..n).map(|i| (i % 97) as f32 / 50.0).collect();
        let y: Vec<f32> = (0..n).map(|i| (i % 13) as f32 / 20.0 - 0.3).collect();
        let a = 0.75f32;
        let (bx, by) = (ctx.buffer_from(&x), ctx.buffer_from(&y));
        let bz = ctx.buffer_from(&vec![-7.0f32; n + 8]);
        k.arg(0, a)
            .arg_buffer(1, &bx)
            .arg_buffer(2, &by)
            .arg_buffer(3, &bz)
            .arg(4, n as i64);
        ctx.run(&k, &[groups * local], Some(&[local]));
        let got: Vec<f32> = ctx.read(&bz, n + 8);
        for i in 0..n {
            let want = host_axpy(a, x[i], y[i]);
            // Contraction is the compiler's choice: one rounding apart at most.
            let tol = want.abs() * 2.0 * f32::EPSILON;
            assert!(
                (got[i] - want).abs() <= tol,
                "n={n} {groups}x{local}: z[{i}] = {}, host {want}",
                got[i]
            );
        }
        assert_eq!(&got[n..], &[-7.0f32; 8], "n={n}: past the end written");
    }
    let width: usize = k
        .sub_group_info(
            ctx.device,
            CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE_KHR,
            &[128],
        )
        .unwrap();
    assert_eq!(width, 16, "a stride loop's sub-group width");
}

#[test]
fn varying_step_keeps_each_lanes_walk() {
    let ctx = DeviceContext::new();
    let program = ctx.build(ELEMENTWISE, "");
    let k = program.kernel("varying_step");
    let (n, global, local) = (3001usize, 256usize, 64usize);
    let x: Vec<i32> = (0..n as i32).map(|i| i * 3 + 1).collect();
    let bx = ctx.buffer_from(&x);
    let bz = ctx.buffer_zeroed::<i32>(global);
    k.arg_buffer(0, &bx).arg_buffer(1, &bz).arg(2, n as i64);
    ctx.run(&k, &[global], Some(&[local]));
    let want: Vec<i32> = (0..global)
        .map(|gid| {
            let step = global + ((gid % local) & 1);
            (gid..n).step_by(step).map(|i| x[i]).sum()
        })
        .collect();
    assert_eq!(ctx.read::<i32>(&bz, global), want);
    let width: usize = k
        .sub_group_info(
            ctx.device,
            CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE_KHR,
            &[local],
        )
        .unwrap();
    assert_eq!(width, 8, "a varying step keeps the default width");
}
