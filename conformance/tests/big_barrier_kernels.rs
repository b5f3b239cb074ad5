//! A kernel too large for one function with both layout bodies (over 40 000
//! Cranelift instructions: compiled as a lane-contiguous function, a general one and
//! an entry choosing per work-group): barriers and `__local` exchanges give the same
//! results as a host model with work-groups that take either body (one row, rows of
//! a width that is not a multiple of the sub-group width, a ragged last group).

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

/// Barrier-separated exchange stages in the kernel.
const STAGES: usize = 40;

fn source() -> String {
    let mut body = String::new();
    for s in 1..=STAGES {
        body += &format!(
            "    t[l] = v;\n    barrier(CLK_LOCAL_MEM_FENCE);\n    \
             v = v * 3 + (t[(l + {s}) % n] ^ {s});\n    barrier(CLK_LOCAL_MEM_FENCE);\n"
        );
    }
    format!(
        "kernel void big(global int* out, local int* t) {{\n    \
         uint l = get_local_id(0) + get_local_size(0) * get_local_id(1);\n    \
         uint n = get_local_size(0) * get_local_size(1);\n    \
         int v = (int)get_global_id(0) * 7 + (int)get_global_id(1) * 13;\n{body}    \
         out[get_global_id(0) + get_global_size(0) * get_global_id(1)] = v;\n}}\n"
    )
}

/// The host model: every work-group of `local` in a `global` range.
fn model(global: [usize; 2], local: [usize; 2]) -> Vec<i32> {
    let mut out = vec![0i32; global[0] * global[1]];
    for gy in (0..global[1]).step_by(local[1]) {
        for gx in (0..global[0]).step_by(local[0]) {
            let lx = local[0].min(global[0] - gx);
            let ly = local[1].min(global[1] - gy);
            let n = lx * ly;
            let mut v: Vec<i32> = (0..n)
                .map(|l| ((gx + l % lx) as i32) * 7 + ((gy + l / lx) as i32) * 13)
                .collect();
            for s in 1..=STAGES {
                let t = v.clone();
                for l in 0..n {
                    v[l] = v[l].wrapping_mul(3).wrapping_add(t[(l + s) % n] ^ s as i32);
                }
            }
            for l in 0..n {
                out[gx + l % lx + global[0] * (gy + l / lx)] = v[l];
            }
        }
    }
    out
}

#[test]
fn big_kernel_with_barriers_runs_both_layouts() {
    let ctx = DeviceContext::new();
    let kernel = ctx.kernel(&source(), "-cl-std=CL3.0", "big");
    // One row of 16; rows of 3 (not a multiple of any sub-group width); 5x5 groups
    // with ragged ones at the end of both dimensions.
    for (global, local) in [
        ([64usize, 2usize], [16usize, 1usize]),
        ([12, 10], [3, 5]),
        ([23, 17], [5, 5]),
    ] {
        let out = ctx.buffer_zeroed::<i32>(global[0] * global[1]);
        kernel
            .arg_buffer(0, &out)
            .arg_local(1, local[0] * local[1] * 4);
        ctx.run(&kernel, &global, Some(&local));
        let got: Vec<i32> = ctx.read(&out, global[0] * global[1]);
        let want = model(global, local);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g,
                w,
                "global {global:?} local {local:?}: item ({}, {})",
                i % global[0],
                i / global[0]
            );
        }
    }
}

/// 2100 barriers around two work-group reductions, with the program's `__local`
/// argument taking all but 1 KiB of the device's local memory (a slot per barrier
/// would not fit): only the collectives take slots, so the kernel launches, and the
/// reductions and the exchange agree with the host.
#[test]
fn thousands_of_barriers_leave_local_memory_to_the_program() {
    const BARRIERS: usize = 2100;
    let mut body = String::new();
    body += "    int first = work_group_reduce_add(v);\n";
    for s in 0..BARRIERS {
        body += &format!("    v += {s} & 7;\n    barrier(CLK_LOCAL_MEM_FENCE);\n");
    }
    body += "    t[l] = v;\n    barrier(CLK_LOCAL_MEM_FENCE);\n    \
             int other = t[(l + 1) % n];\n    int last = work_group_reduce_max(v);\n";
    let src = format!(
        "kernel void many(global int* out, local int* t) {{\n    \
         uint l = get_local_id(0), n = get_local_size(0);\n    \
         int v = (int)get_global_id(0) * 5 - 40;\n{body}    \
         out[get_global_id(0)] = first + other * 3 + last;\n}}\n"
    );
    let ctx = DeviceContext::new();
    let program = ctx.build(&src, "-cl-std=CL2.0");
    let k = program.kernel("many");
    let (global, local) = (96usize, 32usize);
    let out = ctx.buffer_zeroed::<i32>(global);
    let local_mem: cl_ulong = device_info(ctx.device, CL_DEVICE_LOCAL_MEM_SIZE).unwrap();
    let t_bytes = (local_mem as usize - 1024).max(local * 4);
    k.arg_buffer(0, &out).arg_local(1, t_bytes);
    ctx.run(&k, &[global], Some(&[local]));
    let added: i32 = (0..BARRIERS).map(|s| (s & 7) as i32).sum();
    let start = |g: usize| g as i32 * 5 - 40;
    let want: Vec<i32> = (0..global)
        .map(|g| {
            let base = g - g % local;
            let first: i32 = (base..base + local).map(start).sum();
            let other = start(base + (g - base + 1) % local) + added;
            let last = start(base + local - 1) + added;
            first + other * 3 + last
        })
        .collect();
    assert_eq!(ctx.read::<i32>(&out, global), want);
}
