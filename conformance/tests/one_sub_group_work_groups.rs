//! Kernels whose required work-group size is at most a sub-group (4, 8 or 16 items:
//! cranecl compiles each work-group as one sub-group and its barriers as no-ops, see
//! `jit::lower::one_sub_group`): a local-memory prefix sum with barriers in a loop
//! and a divergent step, a tree reduction, a work-group collective next to the
//! barriers, and reads of another item's slot after the barrier. Checked against the
//! host in 1-D (with a ragged last group in OpenCL C 3.0) and 2-D.

use cranecl_conformance::*;

fn source(reqd: [usize; 3]) -> String {
    format!(
        r#"
#define ITEMS (get_local_size(0) * get_local_size(1))
#define LLIN (get_local_id(0) + get_local_size(0) * get_local_id(1))
#define GLIN (get_global_id(0) + get_global_size(0) * get_global_id(1))
kernel __attribute__((reqd_work_group_size({x}, {y}, {z})))
void scan(global const int *in, global int *out, global int *total, global int *mirror,
          local int *a) {{
    size_t l = LLIN, n = ITEMS, i = GLIN;
    a[l] = in[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    mirror[i] = a[n - 1 - l];
    for (size_t off = 1; off < n; off *= 2) {{
        int v = a[l];
        if (l >= off) v += a[l - off];
        barrier(CLK_LOCAL_MEM_FENCE);
        a[l] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }}
    out[i] = a[l];
    total[i] = work_group_reduce_add(in[i]) - a[n - 1];
}}
kernel __attribute__((reqd_work_group_size({x}, {y}, {z})))
void tree_max(global const int *in, global int *out, local int *a) {{
    size_t l = LLIN, n = ITEMS;
    a[l] = in[GLIN];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = 1; s < n; s *= 2) {{
        if (l % (2 * s) == 0 && l + s < n) a[l] = max(a[l], a[l + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }}
    out[GLIN] = a[0] + (int)l;
}}
"#,
        x = reqd[0],
        y = reqd[1],
        z = reqd[2]
    )
}

/// Work-groups of a launch of `global` items with local size `reqd` (2-D at most),
/// each as the global linear ids of its items in local linear order.
fn groups(global: [usize; 2], reqd: [usize; 2]) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    for gy in (0..global[1]).step_by(reqd[1]) {
        for gx in (0..global[0]).step_by(reqd[0]) {
            let (w, h) = (reqd[0].min(global[0] - gx), reqd[1].min(global[1] - gy));
            let mut items = Vec::new();
            for ly in 0..h {
                for lx in 0..w {
                    items.push(gx + lx + global[0] * (gy + ly));
                }
            }
            out.push(items);
        }
    }
    out
}

fn check(ctx: &DeviceContext, options: &str, reqd: [usize; 2], global: [usize; 2]) {
    let program = ctx.build(&source([reqd[0], reqd[1], 1]), options);
    let n = global[0] * global[1];
    let dims = if reqd[1] > 1 || global[1] > 1 { 2 } else { 1 };
    let input: Vec<i32> = (0..n as i32).map(|v| (v * 37 + 11) % 101 - 50).collect();
    let inb = ctx.buffer_from(&input);
    let items = reqd[0] * reqd[1];
    let what = format!("reqd {reqd:?} over {global:?} ({options})");

    let scan = program.kernel("scan");
    let (out, total, mirror) = (
        ctx.buffer_zeroed::<i32>(n),
        ctx.buffer_zeroed::<i32>(n),
        ctx.buffer_zeroed::<i32>(n),
    );
    scan.arg_buffer(0, &inb)
        .arg_buffer(1, &out)
        .arg_buffer(2, &total)
        .arg_buffer(3, &mirror)
        .arg_local(4, items * 4);
    ctx.run(&scan, &global[..dims], Some(&reqd[..dims]));
    let (mut want_out, mut want_mirror) = (vec![0i32; n], vec![0i32; n]);
    for g in groups(global, reqd) {
        let mut acc = 0;
        for (l, &i) in g.iter().enumerate() {
            acc += input[i];
            want_out[i] = acc;
            want_mirror[i] = input[g[g.len() - 1 - l]];
        }
    }
    assert_eq!(ctx.read::<i32>(&out, n), want_out, "scan, {what}");
    assert_eq!(ctx.read::<i32>(&mirror, n), want_mirror, "mirror, {what}");
    assert_eq!(ctx.read::<i32>(&total, n), vec![0; n], "collective, {what}");

    let tree = program.kernel("tree_max");
    let out = ctx.buffer_zeroed::<i32>(n);
    tree.arg_buffer(0, &inb)
        .arg_buffer(1, &out)
        .arg_local(2, items * 4);
    ctx.run(&tree, &global[..dims], Some(&reqd[..dims]));
    let mut want = vec![0i32; n];
    for g in groups(global, reqd) {
        let m = g.iter().map(|&i| input[i]).max().unwrap_or(0);
        for (l, &i) in g.iter().enumerate() {
            want[i] = m + l as i32;
        }
    }
    assert_eq!(ctx.read::<i32>(&out, n), want, "tree_max, {what}");
}

#[test]
fn barriers_of_one_sub_group_work_groups_order_local_memory() {
    let ctx = DeviceContext::new();
    for reqd in [[16, 1], [4, 1], [8, 1], [2, 1], [4, 4], [2, 2]] {
        let global = [reqd[0] * 5, reqd[1] * 3];
        check(&ctx, "-cl-std=CL2.0", reqd, global);
    }
}

#[test]
fn ragged_last_groups_of_one_sub_group_kernels() {
    let ctx = DeviceContext::new();
    for (reqd, n) in [([16, 1], 16 * 4 + 7), ([4, 1], 4 * 9 + 3)] {
        check(&ctx, "-cl-std=CL3.0", reqd, [n, 1]);
    }
}
