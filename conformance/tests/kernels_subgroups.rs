//! Sub-groups at fixed widths W = 4, 8, 16 (`intel_reqd_sub_group_size`) and at the
//! driver's default width: the `get_sub_group_*` built-ins, `sub_group_reduce_add`,
//! `sub_group_broadcast`, `intel_sub_group_shuffle` / `_xor`, including a partial last
//! sub-group when the work-group size is not a multiple of W.
//!
//! These features are cranecl promises: on cranecl a missing extension or width fails
//! the test; on other platforms (e.g. PoCL) the tests return early. Sub-groups are
//! assumed to be consecutive runs of the linear local id (1D work-groups here), which
//! is what cranecl, the Intel CPU runtime and GPUs do.

use cranecl_conformance::*;

/// Widths every test covers; 32 is added when the device lists it.
const WIDTHS: [usize; 3] = [4, 8, 16];

fn widths(ctx: &DeviceContext) -> Vec<usize> {
    let mut w = WIDTHS.to_vec();
    if ctx.sub_group_sizes().contains(&32) {
        w.push(32);
    }
    w
}

/// Whether sub-group tests at width `w` run on this platform.
fn sub_groups_available(ctx: &DeviceContext, w: Option<usize>) -> bool {
    let ext = ctx.has_extension("cl_intel_subgroups")
        && ctx.has_extension("cl_intel_required_subgroup_size");
    if !require(ext, "cl_intel_subgroups + cl_intel_required_subgroup_size") {
        return false;
    }
    match w {
        Some(w) => require(
            ctx.sub_group_sizes().contains(&w),
            &format!("sub-group width {w}"),
        ),
        None => true,
    }
}

fn attr(w: usize) -> String {
    format!("__attribute__((intel_reqd_sub_group_size({w})))")
}

/// Sub-group id and lane of a 1D local id for width `w` and local size `local`.
fn lane_of(l: usize, w: usize, local: usize) -> (usize, usize, usize) {
    let sg = l / w;
    let size = (local - sg * w).min(w);
    (sg, l % w, size)
}

const OPTS: &str = "-cl-std=CL3.0";

#[test]
fn sub_group_ids_with_partial_last_sub_group() {
    let ctx = DeviceContext::new();
    for w in widths(&ctx) {
        if !sub_groups_available(&ctx, Some(w)) {
            return;
        }
        let src = format!(
            r#"{a} kernel void k(global uint* o) {{
                global uint* r = o + get_global_id(0) * 5;
                r[0] = get_sub_group_size();
                r[1] = get_max_sub_group_size();
                r[2] = get_num_sub_groups();
                r[3] = get_sub_group_id();
                r[4] = get_sub_group_local_id();
            }}"#,
            a = attr(w)
        );
        for local in [w * 4, w * 2 + w / 2, 1, w - 1, 3 * w + 1] {
            let groups = 3;
            let n = local * groups;
            let kernel = ctx.kernel(&src, OPTS, "k");
            let out = ctx.buffer_zeroed::<u32>(n * 5);
            kernel.arg_buffer(0, &out);
            ctx.run(&kernel, &[n], Some(&[local]));
            let got: Vec<u32> = ctx.read(&out, n * 5);
            for i in 0..n {
                let (sg, lane, size) = lane_of(i % local, w, local);
                let want = [size, w, local.div_ceil(w), sg, lane].map(|v| v as u32);
                assert_eq!(
                    &got[i * 5..i * 5 + 5],
                    &want,
                    "W={w} local={local} item {i}: [size, max, num, id, lane]"
                );
            }
        }
    }
}

#[test]
fn sub_group_reduce_add_and_broadcast() {
    let ctx = DeviceContext::new();
    for w in widths(&ctx) {
        if !sub_groups_available(&ctx, Some(w)) {
            return;
        }
        let src = format!(
            r#"{a} kernel void k(global const int* in, global const float* fin, global int* o, global float* fo) {{
                size_t i = get_global_id(0);
                int x = in[i];
                float f = fin[i];
                o[3 * i] = sub_group_reduce_add(x);
                o[3 * i + 1] = sub_group_broadcast(x, get_sub_group_size() - 1);
                o[3 * i + 2] = sub_group_reduce_add((int)get_sub_group_local_id());
                fo[2 * i] = sub_group_reduce_add(f);
                fo[2 * i + 1] = sub_group_broadcast(f, 0);
            }}"#,
            a = attr(w)
        );
        for local in [w * 4, w * 3 + w / 2 + 1] {
            let n = local * 5;
            let mut rng = TestRng::new(w as u64 * 31 + local as u64);
            let xs: Vec<i32> = rng.vec(n, |r| (r.next_u32() % 2000) as i32 - 1000);
            // Small integers as floats: sums are exact in any order.
            let fs: Vec<f32> = rng.vec(n, |r| (r.next_u32() % 64) as f32 - 32.0);
            let a = ctx.buffer_from(&xs);
            let b = ctx.buffer_from(&fs);
            let o = ctx.buffer_zeroed::<i32>(3 * n);
            let fo = ctx.buffer_zeroed::<f32>(2 * n);
            run_with_buffers(
                &ctx,
                &src,
                OPTS,
                "k",
                &[&a, &b, &o, &fo],
                &[n],
                Some(&[local]),
            );
            let got: Vec<i32> = ctx.read(&o, 3 * n);
            let gotf: Vec<f32> = ctx.read(&fo, 2 * n);
            for i in 0..n {
                let (sg, _, size) = lane_of(i % local, w, local);
                let first = (i / local) * local + sg * w;
                let members = first..first + size;
                let sum: i32 = xs[members.clone()].iter().sum();
                let fsum: f32 = fs[members.clone()].iter().sum();
                let what = format!("W={w} local={local} item {i} (sub-group of {size})");
                assert_eq!(got[3 * i], sum, "sub_group_reduce_add(int) {what}");
                assert_eq!(
                    got[3 * i + 1],
                    xs[first + size - 1],
                    "sub_group_broadcast(int, last) {what}"
                );
                assert_eq!(
                    got[3 * i + 2],
                    (size * (size - 1) / 2) as i32,
                    "reduce of lane ids {what}"
                );
                assert_eq!(gotf[2 * i], fsum, "sub_group_reduce_add(float) {what}");
                assert_eq!(
                    gotf[2 * i + 1],
                    fs[first],
                    "sub_group_broadcast(float, 0) {what}"
                );
            }
        }
    }
}

#[test]
fn intel_shuffles() {
    let ctx = DeviceContext::new();
    for w in widths(&ctx) {
        if !sub_groups_available(&ctx, Some(w)) {
            return;
        }
        let src = format!(
            r#"{a} kernel void k(global const int* in, global const float* fin, global int* o, global float* fo, int mask) {{
                size_t i = get_global_id(0);
                uint lane = get_sub_group_local_id();
                uint size = get_sub_group_size();
                int x = in[i];
                o[3 * i] = intel_sub_group_shuffle(x, (lane * 3u + 1u) % size);
                o[3 * i + 1] = intel_sub_group_shuffle_xor(x, (uint)mask);
                o[3 * i + 2] = intel_sub_group_shuffle(x, (uint)in[i] % size);
                fo[i] = intel_sub_group_shuffle_xor(fin[i], 1u);
            }}"#,
            a = attr(w)
        );
        // Full sub-groups only: xor partners must exist.
        let local = w * 4;
        let n = local * 3;
        for mask in [1usize, 2, w / 2, w - 1] {
            let mut rng = TestRng::new(mask as u64 + 100 * w as u64);
            let xs: Vec<i32> = rng.vec(n, |r| (r.next_u32() % 100000) as i32);
            let fs: Vec<f32> = rng.vec(n, |r| r.f32_in(-1.0, 1.0));
            let a = ctx.buffer_from(&xs);
            let b = ctx.buffer_from(&fs);
            let o = ctx.buffer_zeroed::<i32>(3 * n);
            let fo = ctx.buffer_zeroed::<f32>(n);
            let kernel = ctx.kernel(&src, OPTS, "k");
            kernel
                .arg_buffer(0, &a)
                .arg_buffer(1, &b)
                .arg_buffer(2, &o)
                .arg_buffer(3, &fo)
                .arg(4, mask as i32);
            ctx.run(&kernel, &[n], Some(&[local]));
            let got: Vec<i32> = ctx.read(&o, 3 * n);
            let gotf: Vec<f32> = ctx.read(&fo, n);
            for i in 0..n {
                let lane = i % w;
                let base = i - lane;
                let what = format!("W={w} mask={mask} item {i}");
                assert_eq!(got[3 * i], xs[base + (lane * 3 + 1) % w], "shuffle {what}");
                assert_eq!(
                    got[3 * i + 1],
                    xs[base + (lane ^ mask)],
                    "shuffle_xor {what}"
                );
                assert_eq!(
                    got[3 * i + 2],
                    xs[base + (xs[i] as usize % w)],
                    "data-dependent shuffle {what}"
                );
                assert_eq!(
                    gotf[i].to_bits(),
                    fs[base + (lane ^ 1)].to_bits(),
                    "float shuffle_xor {what}"
                );
            }
        }
    }
}

#[test]
fn shuffle_in_partial_sub_group() {
    let ctx = DeviceContext::new();
    for w in widths(&ctx) {
        if !sub_groups_available(&ctx, Some(w)) {
            return;
        }
        let src = format!(
            r#"{a} kernel void k(global const int* in, global int* o) {{
                size_t i = get_global_id(0);
                uint size = get_sub_group_size();
                uint lane = get_sub_group_local_id();
                o[i] = intel_sub_group_shuffle(in[i], size - 1u - lane);
            }}"#,
            a = attr(w)
        );
        let local = 2 * w + w / 2 + 1;
        let n = local * 4;
        let xs: Vec<i32> = (0..n as i32).map(|v| v * 11 + 5).collect();
        let a = ctx.buffer_from(&xs);
        let o = ctx.buffer_zeroed::<i32>(n);
        run_with_buffers(&ctx, &src, OPTS, "k", &[&a, &o], &[n], Some(&[local]));
        let got: Vec<i32> = ctx.read(&o, n);
        for (i, value) in got.iter().enumerate() {
            let (sg, lane, size) = lane_of(i % local, w, local);
            let first = (i / local) * local + sg * w;
            assert_eq!(
                *value,
                xs[first + size - 1 - lane],
                "W={w} local={local} item {i} (reversal in a sub-group of {size})"
            );
        }
    }
}

#[test]
fn default_width_is_consistent_with_queries() {
    let ctx = DeviceContext::new();
    if !sub_groups_available(&ctx, None) {
        return;
    }
    let src = r#"kernel void k(global const int* in, global int* o) {
        size_t i = get_global_id(0);
        o[2 * i] = get_sub_group_size();
        o[2 * i + 1] = sub_group_reduce_add(in[i]);
    }"#;
    let kernel = ctx.kernel(src, OPTS, "k");
    let local = 64usize;
    let w: usize = kernel
        .sub_group_info(
            ctx.device,
            cranecl_conformance::sys::CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
            &[local],
        )
        .unwrap();
    assert!(
        ctx.sub_group_sizes().contains(&w),
        "default width {w} not among the device's sizes"
    );
    let n = local * 4;
    let xs: Vec<i32> = (0..n as i32).collect();
    let a = ctx.buffer_from(&xs);
    let o = ctx.buffer_zeroed::<i32>(2 * n);
    kernel.arg_buffer(0, &a).arg_buffer(1, &o);
    ctx.run(&kernel, &[n], Some(&[local]));
    let got: Vec<i32> = ctx.read(&o, 2 * n);
    for i in 0..n {
        assert_eq!(got[2 * i] as usize, w, "get_sub_group_size at item {i}");
        let first = i - i % w;
        let sum: i32 = xs[first..first + w].iter().sum();
        assert_eq!(got[2 * i + 1], sum, "reduce at item {i}");
    }
}

#[test]
fn sub_group_ops_with_barriers_and_local_memory() {
    // Sub-group partial sums, combined across the work-group through local memory.
    let ctx = DeviceContext::new();
    for w in widths(&ctx) {
        if !sub_groups_available(&ctx, Some(w)) {
            return;
        }
        let src = format!(
            r#"{a} kernel void k(global const int* in, global int* o, local int* partial) {{
                int s = sub_group_reduce_add(in[get_global_id(0)]);
                if (get_sub_group_local_id() == 0) partial[get_sub_group_id()] = s;
                barrier(CLK_LOCAL_MEM_FENCE);
                int total = 0;
                for (uint j = 0; j < get_num_sub_groups(); j++) total += partial[j];
                o[get_global_id(0)] = total;
            }}"#,
            a = attr(w)
        );
        let local = 8 * w;
        let n = local * 6;
        let xs: Vec<i32> = (0..n as i32).map(|v| (v * 7919) % 1000).collect();
        let a = ctx.buffer_from(&xs);
        let o = ctx.buffer_zeroed::<i32>(n);
        let kernel = ctx.kernel(&src, OPTS, "k");
        kernel
            .arg_buffer(0, &a)
            .arg_buffer(1, &o)
            .arg_local(2, 4 * local / w);
        ctx.run(&kernel, &[n], Some(&[local]));
        let got: Vec<i32> = ctx.read(&o, n);
        for g in 0..6 {
            let want: i32 = xs[g * local..(g + 1) * local].iter().sum();
            assert!(
                got[g * local..(g + 1) * local].iter().all(|&v| v == want),
                "W={w} group {g}"
            );
        }
    }
}

#[test]
fn spirv_kernels_with_required_width() {
    let ctx = DeviceContext::new();
    if !sub_groups_available(&ctx, Some(16)) || !require(ctx.supports_spirv(), "SPIR-V programs") {
        return;
    }
    // `intel_reqd_sub_group_size` arrives as `OpExecutionMode SubgroupSize 16`.
    let src = format!(
        r#"{a} kernel void k(global const int* in, global int* o) {{
            size_t i = get_global_id(0);
            o[2 * i] = (int)get_sub_group_size();
            o[2 * i + 1] = sub_group_reduce_add(in[i]) + intel_sub_group_shuffle_xor(in[i], 3u);
        }}"#,
        a = attr(16)
    );
    let il = spirv::compile(&src, &[]).unwrap_or_else(|e| panic!("{e}"));
    let program = ctx.try_build_il(&il, "").unwrap_or_else(|f| panic!("{f}"));
    let kernel = program.kernel("k");
    let n = 128;
    let xs: Vec<i32> = (0..n as i32).map(|v| v * v % 97).collect();
    let a = ctx.buffer_from(&xs);
    let o = ctx.buffer_zeroed::<i32>(2 * n);
    kernel.arg_buffer(0, &a).arg_buffer(1, &o);
    ctx.run(&kernel, &[n], Some(&[64]));
    let got: Vec<i32> = ctx.read(&o, 2 * n);
    for i in 0..n {
        let first = i - i % 16;
        let sum: i32 = xs[first..first + 16].iter().sum();
        assert_eq!(got[2 * i], 16, "get_sub_group_size at {i}");
        assert_eq!(
            got[2 * i + 1],
            sum + xs[first + ((i % 16) ^ 3)],
            "reduce + shuffle_xor at {i}"
        );
    }
}

/// Child half of `subgroup_width_from_environment`.
#[test]
fn subgroup_width_child() {
    if !is_child_for("subgroup_width_child") {
        return;
    }
    let want: usize = std::env::var("CRANECL_SUBGROUP_WIDTH")
        .unwrap()
        .parse()
        .unwrap();
    let ctx = DeviceContext::new();
    let src = "kernel void k(global uint* o) { o[get_global_id(0)] = get_sub_group_size(); }";
    let kernel = ctx.kernel(src, OPTS, "k");
    let out = ctx.buffer_zeroed::<u32>(64);
    kernel.arg_buffer(0, &out);
    ctx.run(&kernel, &[64], Some(&[64]));
    assert_eq!(
        ctx.read::<u32>(&out, 64),
        vec![want as u32; 64],
        "CRANECL_SUBGROUP_WIDTH={want}"
    );
    // A required size still wins over the environment.
    let fixed = format!("{} {src}", attr(8));
    let kernel = ctx.kernel(&fixed, OPTS, "k");
    kernel.arg_buffer(0, &out);
    ctx.run(&kernel, &[64], Some(&[64]));
    assert_eq!(
        ctx.read::<u32>(&out, 64),
        vec![8u32; 64],
        "intel_reqd_sub_group_size(8) under CRANECL_SUBGROUP_WIDTH={want}"
    );
    println!("CHILD-OK");
}

#[test]
fn subgroup_width_from_environment() {
    if is_child() || !testing_cranecl() {
        return;
    }
    for w in ["4", "16"] {
        run_in_child("subgroup_width_child", &[("CRANECL_SUBGROUP_WIDTH", w)]);
    }
}
