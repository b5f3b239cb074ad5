//! Kernels with a `reqd_work_group_size` in programs that only allow uniform
//! work-groups (OpenCL C 1.2, `-cl-uniform-work-group-size`): their sub-groups are
//! all full, which cranecl compiles for (no partial-sub-group code). Each shape, with
//! and without barriers, in 1D/2D/3D, is checked against a host reference, next to
//! the same kernel in an OpenCL C 3.0 build with a ragged last group (which keeps
//! the partial path) and the uniform build refusing a ragged launch.

use cranecl_conformance::*;
use opencl_sys::CL_INVALID_WORK_GROUP_SIZE;

fn source(reqd: [usize; 3]) -> String {
    format!(
        r#"
#define GLIN (get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2)))
#define LLIN (get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)))
kernel __attribute__((reqd_work_group_size({x}, {y}, {z})))
void plain(global const int *in, global int *out) {{
    size_t i = GLIN;
    out[i] = in[i] * 3 + (int)LLIN;
}}
kernel __attribute__((reqd_work_group_size({x}, {y}, {z})))
void shared(global const int *in, global int *out, local int *tmp) {{
    size_t l = LLIN, n = get_local_size(0) * get_local_size(1) * get_local_size(2);
    size_t i = GLIN;
    int keep = in[i];
    tmp[l] = keep;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[i] = tmp[n - 1 - l] + keep;
}}
"#,
        x = reqd[0],
        y = reqd[1],
        z = reqd[2]
    )
}

/// Runs both kernels over `global` with the required local size and checks them.
fn check(ctx: &DeviceContext, program: &Program, reqd: [usize; 3], global: [usize; 3]) {
    let dims = if reqd[2] > 1 || global[2] > 1 {
        3
    } else if reqd[1] > 1 || global[1] > 1 {
        2
    } else {
        1
    };
    let n: usize = global.iter().product();
    let input: Vec<i32> = (0..n as i32).map(|v| v * 7 - 100).collect();
    let inb = ctx.buffer_from(&input);
    // Linear ids as the kernels compute them.
    let mut local_linear = vec![0usize; n];
    let items: usize = reqd.iter().product();
    for zg in 0..global[2] {
        for yg in 0..global[1] {
            for xg in 0..global[0] {
                let i = xg + global[0] * (yg + global[1] * zg);
                let (lx, ly, lz) = (xg % reqd[0], yg % reqd[1], zg % reqd[2]);
                local_linear[i] = lx + reqd[0] * (ly + reqd[1] * lz);
            }
        }
    }
    let plain = program.kernel("plain");
    let out = ctx.buffer_zeroed::<i32>(n);
    plain.arg_buffer(0, &inb).arg_buffer(1, &out);
    ctx.run(&plain, &global[..dims], Some(&reqd[..dims]));
    let expect: Vec<i32> = (0..n)
        .map(|i| input[i] * 3 + local_linear[i] as i32)
        .collect();
    assert_eq!(
        ctx.read::<i32>(&out, n),
        expect,
        "plain {reqd:?} over {global:?}"
    );

    let shared = program.kernel("shared");
    let out = ctx.buffer_zeroed::<i32>(n);
    shared
        .arg_buffer(0, &inb)
        .arg_buffer(1, &out)
        .arg_local(2, items * 4);
    ctx.run(&shared, &global[..dims], Some(&reqd[..dims]));
    // The item of the same group whose local linear id is items - 1 - own.
    let mut by_group_and_local = std::collections::HashMap::new();
    for zg in 0..global[2] {
        for yg in 0..global[1] {
            for xg in 0..global[0] {
                let i = xg + global[0] * (yg + global[1] * zg);
                let g = (xg / reqd[0], yg / reqd[1], zg / reqd[2]);
                by_group_and_local.insert((g, local_linear[i]), i);
            }
        }
    }
    let expect: Vec<i32> = (0..n)
        .map(|i| {
            let (xg, yg, zg) = (
                i % global[0],
                (i / global[0]) % global[1],
                i / (global[0] * global[1]),
            );
            let g = (xg / reqd[0], yg / reqd[1], zg / reqd[2]);
            let partner = by_group_and_local[&(g, items - 1 - local_linear[i])];
            input[partner] + input[i]
        })
        .collect();
    assert_eq!(
        ctx.read::<i32>(&out, n),
        expect,
        "shared {reqd:?} over {global:?}"
    );
}

#[test]
fn uniform_builds_with_required_sizes_compute_right() {
    let ctx = DeviceContext::new();
    for reqd in [
        [8, 1, 1],
        [16, 4, 1],
        [4, 4, 2],
        [24, 1, 1],
        [12, 2, 1],
        [5, 3, 1],
    ] {
        let program = ctx.build(&source(reqd), "-cl-std=CL1.2");
        let global = [reqd[0] * 3, reqd[1] * 2, reqd[2] * 2];
        check(&ctx, &program, reqd, global);
        let program = ctx.build(&source(reqd), "-cl-std=CL3.0 -cl-uniform-work-group-size");
        check(&ctx, &program, reqd, global);
    }
}

#[test]
fn ragged_groups_keep_working_where_allowed_and_are_refused_where_not() {
    let ctx = DeviceContext::new();
    let reqd = [16usize, 1, 1];
    let program = ctx.build(&source(reqd), "-cl-std=CL3.0");
    let n = 16 * 3 + 5;
    let input: Vec<i32> = (0..n as i32).map(|v| v * 5 + 1).collect();
    let inb = ctx.buffer_from(&input);
    let out = ctx.buffer_zeroed::<i32>(n);
    let k = program.kernel("plain");
    k.arg_buffer(0, &inb).arg_buffer(1, &out);
    ctx.run(&k, &[n], Some(&[16]));
    let expect: Vec<i32> = (0..n).map(|i| input[i] * 3 + (i % 16) as i32).collect();
    assert_eq!(ctx.read::<i32>(&out, n), expect, "ragged last group");

    let uniform = ctx.build(&source(reqd), "-cl-std=CL1.2");
    let k = uniform.kernel("plain");
    k.arg_buffer(0, &inb).arg_buffer(1, &out);
    let err = ctx
        .try_enqueue(&k, None, &[n], Some(&[16]))
        .err()
        .map(|e| e.code);
    assert_eq!(err, Some(CL_INVALID_WORK_GROUP_SIZE));
}
