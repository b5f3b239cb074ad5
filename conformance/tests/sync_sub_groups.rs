//! Synchronising kernels in work-groups of many sub-groups: a required work-group size
//! whose rows are multiples of 16 items, barriers or collectives, and divergent loops
//! that carry few values, which cranecl compiles at sub-group width 16
//! (`jit::width::sync`). Checked against the host: clbench's local-memory tree
//! reduction after a strided accumulation loop (with a ragged element count, so the
//! loop's exit diverges), a work-group and sub-group collective reduction, a 2-D
//! shape, and a pyopencl-style reduction whose loop carries a 64-bit index (which
//! keeps the default width). The kernels also report their sub-group facts, which
//! must agree with the API's queries.

use cranecl_conformance::consts::*;
use cranecl_conformance::*;

const SOURCE: &str = r#"
kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void tree(global const uint *in, global uint *partial, uint n, global uint *facts) {
    local uint sdata[WX * WY];
    const uint lid = get_local_linear_id();
    const uint gsz = get_global_size(0) * get_global_size(1);
    const uint gid = get_global_id(1) * get_global_size(0) + get_global_id(0);
    uint s = 0;
    for (uint i = gid; i < n; i += gsz)
        s += in[i] * (i % 7 + 1);
    sdata[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = WX * WY / 2; off > 0; off >>= 1) {
        if (lid < off)
            sdata[lid] += sdata[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const uint g = get_group_id(1) * get_num_groups(0) + get_group_id(0);
    if (lid == 0)
        partial[g] = sdata[0];
    global uint *f = facts + (g * WX * WY + lid) * 4;
    f[0] = get_sub_group_size();
    f[1] = get_max_sub_group_size();
    f[2] = get_num_sub_groups();
    f[3] = get_sub_group_id() * get_max_sub_group_size() + get_sub_group_local_id();
}

kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void collective(global const uint *in, global uint *partial, global uint *sg, uint n) {
    const uint gsz = get_global_size(0) * get_global_size(1);
    const uint gid = get_global_id(1) * get_global_size(0) + get_global_id(0);
    uint s = 0;
    for (uint i = gid; i < n; i += gsz)
        s += in[i];
    const uint g = get_group_id(1) * get_num_groups(0) + get_group_id(0);
    const uint w = work_group_reduce_add(s);
    const uint m = sub_group_reduce_max(s);
    if (get_local_linear_id() == 0)
        partial[g] = w;
    if (get_sub_group_local_id() == 0)
        sg[g * get_num_sub_groups() + get_sub_group_id()] = m;
}

kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void long_index(global const uint *in, global uint *partial, long n, uint seq) {
    local uint sdata[WX * WY];
    const uint lid = get_local_linear_id();
    long i = (long)get_group_id(0) * WX * WY * seq + lid;
    uint acc = 0;
    for (uint s = 0; s < seq; ++s) {
        if (i >= n)
            break;
        acc += in[i];
        i += WX * WY;
    }
    sdata[lid] = acc;
    for (uint off = WX * WY / 2; off > 0; off >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < off)
            sdata[lid] += sdata[lid + off];
    }
    if (lid == 0)
        partial[get_group_id(0)] = sdata[0];
}
"#;

fn input(n: usize) -> Vec<u32> {
    (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 20)
        .collect()
}

/// The per-work-group sums of `tree` and `collective` for work-groups of `wx` x `wy`
/// over a `groups` x 2 grid of them, and the sub-group facts against the queries.
fn check_shape(ctx: &DeviceContext, wx: usize, wy: usize, n: usize) {
    let program = ctx.build(SOURCE, &format!("-cl-std=CL3.0 -DWX={wx} -DWY={wy}"));
    let items = wx * wy;
    let global = [wx * 3, wy * 2];
    let groups = 6;
    let gsz = global[0] * global[1];
    let data = input(n);
    let inb = ctx.buffer_from(&data);
    // Item of global linear id `gid` (row-major over the launch) and its group.
    let group_of = |gid: usize| {
        let (x, y) = (gid % global[0], gid / global[0]);
        (y / wy) * (global[0] / wx) + x / wx
    };
    let item_sum = |gid: usize, weighted: bool| {
        (gid..n).step_by(gsz).fold(0u32, |s, i| {
            let w = if weighted { i as u32 % 7 + 1 } else { 1 };
            s.wrapping_add(data[i].wrapping_mul(w))
        })
    };

    let tree = program.kernel("tree");
    let partial = ctx.buffer_zeroed::<u32>(groups);
    let facts = ctx.buffer_zeroed::<u32>(groups * items * 4);
    tree.arg_buffer(0, &inb)
        .arg_buffer(1, &partial)
        .arg(2, n as u32)
        .arg_buffer(3, &facts);
    ctx.run(&tree, &global, Some(&[wx, wy]));
    let mut expect = vec![0u32; groups];
    for gid in 0..gsz {
        expect[group_of(gid)] = expect[group_of(gid)].wrapping_add(item_sum(gid, true));
    }
    assert_eq!(
        ctx.read::<u32>(&partial, groups),
        expect,
        "tree {wx}x{wy} n={n}"
    );
    let max: usize = tree
        .sub_group_info(
            ctx.device,
            CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE_KHR,
            &[wx, wy],
        )
        .unwrap();
    let count: usize = tree
        .sub_group_info(
            ctx.device,
            CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE_KHR,
            &[wx, wy],
        )
        .unwrap();
    assert_eq!(count, items.div_ceil(max), "sub-group count");
    for (i, f) in ctx
        .read::<u32>(&facts, groups * items * 4)
        .chunks(4)
        .enumerate()
    {
        let l = i % items;
        let size = max.min(items - l / max * max);
        assert_eq!(
            [f[0] as usize, f[1] as usize, f[2] as usize, f[3] as usize],
            [size, max, count, l],
            "tree {wx}x{wy}: item {i}: sub-group size, max size, count, linear id"
        );
    }

    let collective = program.kernel("collective");
    let partial = ctx.buffer_zeroed::<u32>(groups);
    let sg = ctx.buffer_zeroed::<u32>(groups * count);
    collective
        .arg_buffer(0, &inb)
        .arg_buffer(1, &partial)
        .arg_buffer(2, &sg)
        .arg(3, n as u32);
    ctx.run(&collective, &global, Some(&[wx, wy]));
    let mut expect = vec![0u32; groups];
    let mut expect_sg = vec![0u32; groups * count];
    for gid in 0..gsz {
        let (x, y) = (gid % global[0], gid / global[0]);
        let l = (y % wy) * wx + x % wx;
        let g = group_of(gid);
        let s = item_sum(gid, false);
        expect[g] = expect[g].wrapping_add(s);
        let slot = &mut expect_sg[g * count + l / max];
        *slot = (*slot).max(s);
    }
    assert_eq!(
        ctx.read::<u32>(&partial, groups),
        expect,
        "work_group_reduce_add {wx}x{wy} n={n}"
    );
    assert_eq!(
        ctx.read::<u32>(&sg, groups * count),
        expect_sg,
        "sub_group_reduce_max {wx}x{wy} n={n}"
    );
}

#[test]
fn synchronising_kernels_in_many_sub_groups_compute_right() {
    let ctx = DeviceContext::new();
    if !require(
        ctx.has_extension("cl_khr_subgroups"),
        "cl_khr_subgroups for sub-group built-ins",
    ) {
        return;
    }
    // 1-D groups of 256 (clbench's reductions) and 32, and a 2-D 16x4 shape; element
    // counts that leave the accumulation loop's last trip to some items only.
    check_shape(&ctx, 256, 1, 256 * 6 * 16 + 77);
    check_shape(&ctx, 32, 1, 32 * 6 * 5 - 3);
    check_shape(&ctx, 16, 4, 64 * 6 * 3 + 17);
}

#[test]
fn reduction_with_a_64_bit_index_computes_right() {
    let ctx = DeviceContext::new();
    for (wx, n, seq) in [
        (256usize, 256usize * 10 * 4 - 100, 4u32),
        (64, 64 * 7 * 3, 3),
    ] {
        let program = ctx.build(SOURCE, &format!("-cl-std=CL3.0 -DWX={wx} -DWY=1"));
        let k = program.kernel("long_index");
        let groups = n.div_ceil(wx * seq as usize);
        let data = input(n);
        let inb = ctx.buffer_from(&data);
        let partial = ctx.buffer_zeroed::<u32>(groups);
        k.arg_buffer(0, &inb)
            .arg_buffer(1, &partial)
            .arg(2, n as i64)
            .arg(3, seq);
        ctx.run(&k, &[groups * wx], Some(&[wx]));
        let expect: Vec<u32> = data
            .chunks(wx * seq as usize)
            .map(|c| c.iter().fold(0u32, |s, v| s.wrapping_add(*v)))
            .collect();
        assert_eq!(ctx.read::<u32>(&partial, groups), expect, "long_index {wx}");
    }
}
