//! ND-range execution: work-item built-ins in 1, 2 and 3 dimensions with global
//! offsets, driver-chosen local sizes (NULL), non-uniform (ragged) work-groups, large
//! ranges, and in-order execution of many enqueued kernels.

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

const BUILTINS_SRC: &str = r#"
kernel void ids(global uint* out) {
    size_t gx = get_global_id(0) - get_global_offset(0);
    size_t gy = get_global_id(1) - get_global_offset(1);
    size_t gz = get_global_id(2) - get_global_offset(2);
    size_t linear = (gz * get_global_size(1) + gy) * get_global_size(0) + gx;
    global uint* r = out + linear * 20;
    for (uint d = 0; d < 3; d++) {
        r[d] = (uint)get_global_id(d);
        r[3 + d] = (uint)get_local_id(d);
        r[6 + d] = (uint)get_group_id(d);
        r[9 + d] = (uint)get_num_groups(d);
        r[12 + d] = (uint)get_local_size(d);
        r[15 + d] = (uint)get_global_size(d);
    }
    r[18] = get_work_dim();
    r[19] = (uint)get_global_offset(0) + 1000u * (uint)get_global_offset(1) + 1000000u * (uint)get_global_offset(2);
}
"#;

/// Runs the built-ins kernel and checks every value against the host model of the
/// ND-range. `local` = None lets the driver choose; the check then reads the local size
/// from work-item 0 and verifies consistency.
fn check_builtins(
    ctx: &DeviceContext,
    options: &str,
    offset: &[usize],
    global: &[usize],
    local: Option<&[usize]>,
) {
    let dims = global.len();
    let total: usize = global.iter().product();
    let kernel = ctx.kernel(BUILTINS_SRC, options, "ids");
    let out = ctx.buffer_zeroed::<u32>(total * 20);
    kernel.arg_buffer(0, &out);
    ctx.run_offset(&kernel, Some(offset), global, local);
    let got: Vec<u32> = ctx.read(&out, total * 20);
    let pad = |v: &[usize], fill: usize| -> [usize; 3] {
        let mut a = [fill; 3];
        a[..v.len()].copy_from_slice(v);
        a
    };
    let g = pad(global, 1);
    let o = pad(offset, 0);
    // Enqueued local size: as given, or what the driver reported for item 0.
    let l = match local {
        Some(l) => pad(l, 1),
        None => {
            let l = [got[12] as usize, got[13] as usize, got[14] as usize];
            for d in 0..3 {
                assert!(l[d] >= 1, "driver-chosen local size {l:?}");
                if d >= dims {
                    assert_eq!(l[d], 1);
                }
            }
            l
        }
    };
    let nonuniform = (0..3).any(|d| g[d] % l[d] != 0);
    for z in 0..g[2] {
        for y in 0..g[1] {
            for x in 0..g[0] {
                let linear = (z * g[1] + y) * g[0] + x;
                let r = &got[linear * 20..linear * 20 + 20];
                let p = [x, y, z];
                for d in 0..3 {
                    let gid = p[d] + o[d];
                    let group = p[d] / l[d];
                    let groups = g[d].div_ceil(l[d]);
                    // The last group of a ragged dimension is smaller.
                    let this_local = if group == groups - 1 && g[d] % l[d] != 0 {
                        g[d] % l[d]
                    } else {
                        l[d]
                    };
                    let what = |name: &str| {
                        format!("{name}({d}) at {p:?}, global {g:?}, local {l:?}, offset {o:?}")
                    };
                    assert_eq!(r[d] as usize, gid, "{}", what("get_global_id"));
                    assert_eq!(r[3 + d] as usize, p[d] % l[d], "{}", what("get_local_id"));
                    assert_eq!(r[6 + d] as usize, group, "{}", what("get_group_id"));
                    assert_eq!(r[9 + d] as usize, groups, "{}", what("get_num_groups"));
                    if local.is_some() || nonuniform {
                        assert_eq!(r[12 + d] as usize, this_local, "{}", what("get_local_size"));
                    }
                    assert_eq!(r[15 + d] as usize, g[d], "{}", what("get_global_size"));
                }
                assert_eq!(r[18] as usize, dims, "get_work_dim");
                assert_eq!(
                    r[19] as usize,
                    o[0] + 1000 * o[1] + 1_000_000 * o[2],
                    "get_global_offset"
                );
            }
        }
    }
}

#[test]
fn one_dimension_with_offset() {
    let ctx = DeviceContext::new();
    check_builtins(&ctx, "", &[0], &[256], Some(&[32]));
    check_builtins(&ctx, "", &[17], &[96], Some(&[8]));
    check_builtins(&ctx, "", &[5], &[1], Some(&[1]));
}

#[test]
fn two_dimensions_with_offset() {
    let ctx = DeviceContext::new();
    check_builtins(&ctx, "", &[3, 7], &[32, 12], Some(&[8, 4]));
    check_builtins(&ctx, "", &[0, 0], &[5, 40], Some(&[1, 8]));
}

#[test]
fn three_dimensions_with_offset() {
    let ctx = DeviceContext::new();
    check_builtins(&ctx, "", &[1, 2, 3], &[8, 6, 4], Some(&[4, 3, 2]));
    check_builtins(&ctx, "", &[100, 0, 7], &[16, 2, 3], Some(&[16, 1, 1]));
}

#[test]
fn driver_chosen_local_size() {
    let ctx = DeviceContext::new();
    check_builtins(&ctx, "", &[0], &[1000], None);
    check_builtins(&ctx, "", &[2, 3], &[30, 7], None);
    check_builtins(&ctx, "", &[0, 0, 0], &[6, 5, 3], None);
    check_builtins(&ctx, "", &[0], &[1031], None);
}

#[test]
fn non_uniform_work_groups() {
    let ctx = DeviceContext::new();
    let supported: cl_bool = device_info(
        ctx.device,
        cranecl_conformance::consts::CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT,
    )
    .unwrap();
    let c3 = ctx.try_build("kernel void k() {}", "-cl-std=CL3.0").is_ok();
    if !require(
        supported == CL_TRUE && c3,
        "non-uniform work-groups with -cl-std=CL3.0",
    ) {
        return;
    }
    check_builtins(&ctx, "-cl-std=CL3.0", &[0], &[100], Some(&[16]));
    check_builtins(&ctx, "-cl-std=CL3.0", &[4, 1], &[10, 7], Some(&[4, 3]));
    check_builtins(
        &ctx,
        "-cl-std=CL3.0",
        &[0, 0, 0],
        &[5, 5, 5],
        Some(&[2, 2, 2]),
    );
    // get_enqueued_local_size reports the requested size in every group.
    let src = r#"kernel void k(global uint* o) {
        size_t i = get_global_id(0);
        o[2 * i] = (uint)get_enqueued_local_size(0);
        o[2 * i + 1] = (uint)get_local_size(0);
    }"#;
    let kernel = ctx.kernel(src, "-cl-std=CL3.0", "k");
    let out = ctx.buffer_zeroed::<u32>(2 * 37);
    kernel.arg_buffer(0, &out);
    ctx.run(&kernel, &[37], Some(&[8]));
    let got: Vec<u32> = ctx.read(&out, 2 * 37);
    for i in 0..37 {
        assert_eq!(got[2 * i], 8);
        assert_eq!(got[2 * i + 1], if i >= 32 { 5 } else { 8 }, "work-item {i}");
    }
}

#[test]
fn large_range_covers_every_item_once() {
    let ctx = DeviceContext::new();
    let src =
        "kernel void k(global uint* o) { size_t i = get_global_id(0); o[i] += (uint)i * 2u + 1u; }";
    let n = 1 << 20;
    let kernel = ctx.kernel(src, "", "k");
    let out = ctx.buffer_zeroed::<u32>(n);
    kernel.arg_buffer(0, &out);
    ctx.run(&kernel, &[n], None);
    let got: Vec<u32> = ctx.read(&out, n);
    for (i, v) in got.iter().enumerate() {
        assert_eq!(
            *v,
            i as u32 * 2 + 1,
            "work-item {i} ran {} times",
            if *v == 0 { 0 } else { 2 }
        );
    }
}

#[test]
fn many_small_enqueues_run_in_order() {
    let ctx = DeviceContext::new();
    let src = "kernel void k(global int* o, int step) { size_t i = get_global_id(0); o[i] = o[i] * 3 + step; }";
    let kernel = ctx.kernel(src, "", "k");
    let out = ctx.buffer_zeroed::<i32>(64);
    kernel.arg_buffer(0, &out);
    let mut want = vec![0i32; 64];
    let mut events = Vec::new();
    for step in 0..200 {
        kernel.arg(1, step);
        events.push(ctx.try_enqueue(&kernel, None, &[64], None).unwrap());
        for w in want.iter_mut() {
            *w = w.wrapping_mul(3).wrapping_add(step);
        }
    }
    let raw: Vec<cl_event> = events.iter().map(|e| e.raw()).collect();
    // SAFETY: all events valid.
    check(
        unsafe { clWaitForEvents(raw.len() as cl_uint, raw.as_ptr()) },
        "clWaitForEvents",
    )
    .unwrap();
    for e in &events {
        assert_eq!(e.status().unwrap(), CL_COMPLETE as cl_int);
    }
    assert_eq!(ctx.read::<i32>(&out, 64), want);
}

#[test]
fn arguments_are_captured_at_enqueue() {
    let ctx = DeviceContext::new();
    let src = "kernel void k(global int* o, int v) { o[get_global_id(0)] = v; }";
    let kernel = ctx.kernel(src, "", "k");
    let a = ctx.buffer_zeroed::<i32>(16);
    let b = ctx.buffer_zeroed::<i32>(16);
    kernel.arg_buffer(0, &a).arg(1, 11i32);
    let e1 = ctx.try_enqueue(&kernel, None, &[16], None).unwrap();
    kernel.arg_buffer(0, &b).arg(1, 22i32);
    let e2 = ctx.try_enqueue(&kernel, None, &[16], None).unwrap();
    e1.wait().unwrap();
    e2.wait().unwrap();
    assert_eq!(ctx.read::<i32>(&a, 16), vec![11; 16]);
    assert_eq!(ctx.read::<i32>(&b, 16), vec![22; 16]);
}

/// Child half of `thread_count_from_environment`.
#[test]
fn thread_count_child() {
    if !is_child_for("thread_count_child") {
        return;
    }
    let ctx = DeviceContext::new();
    let src =
        "kernel void k(global uint* o) { size_t i = get_global_id(0); o[i] = (uint)(i * 7u); }";
    let kernel = ctx.kernel(src, "", "k");
    let n = 100_003;
    let out = ctx.buffer_zeroed::<u32>(n);
    kernel.arg_buffer(0, &out);
    ctx.run(&kernel, &[n], None);
    let got: Vec<u32> = ctx.read(&out, n);
    assert!(got.iter().enumerate().all(|(i, &v)| v == (i * 7) as u32));
    check_builtins(&ctx, "", &[1, 2], &[16, 8], Some(&[4, 4]));
    println!("CHILD-OK");
}

#[test]
fn thread_count_from_environment() {
    if is_child() || !testing_cranecl() {
        return;
    }
    for threads in ["1", "3"] {
        run_in_child("thread_count_child", &[("CRANECL_NUM_THREADS", threads)]);
    }
}
