//! Work-groups of `CL_DEVICE_MAX_WORK_GROUP_SIZE` items: barriers with `__local`
//! memory, work-group collectives and private arrays kept across barriers all hold at
//! the largest size, and `CL_KERNEL_WORK_GROUP_SIZE` is what the device can actually
//! launch for a kernel (more than that is refused with `CL_INVALID_WORK_GROUP_SIZE`).

use cranecl_conformance::*;
use opencl_sys::{
    CL_DEVICE_MAX_WORK_GROUP_SIZE, CL_DEVICE_MAX_WORK_ITEM_SIZES, CL_INVALID_WORK_GROUP_SIZE,
    CL_KERNEL_WORK_GROUP_SIZE,
};

const OPTS: &str = "-cl-std=CL3.0";

fn max_wg(ctx: &DeviceContext) -> usize {
    device_info(ctx.device, CL_DEVICE_MAX_WORK_GROUP_SIZE).expect("max work-group size")
}

#[test]
fn device_limits_are_consistent() {
    let ctx = DeviceContext::new();
    let max = max_wg(&ctx);
    let sizes =
        from_bytes::<usize>(&device_info_bytes(ctx.device, CL_DEVICE_MAX_WORK_ITEM_SIZES).unwrap());
    assert!(
        sizes[0] >= max,
        "dimension 0 limit {} below {max}",
        sizes[0]
    );
    if testing_cranecl() {
        assert_eq!(max, 1024);
    }
}

/// A tree reduction in `__local` memory over the whole group (log2(size) barriers)
/// next to work_group_reduce_add and a barrier-crossing private value, at the
/// kernel's largest group size.
#[test]
fn local_tree_reduction_at_the_largest_group() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void tree(global const uint *in, global uint *out, global uint *wg, global uint *back,
                 local uint *tmp) {
    size_t l = get_local_id(0), n = get_local_size(0);
    uint mine = in[get_global_id(0)];
    uint keep = mine * 3u + (uint)l;           // lives across every barrier below
    tmp[l] = mine;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = n / 2; s > 0; s >>= 1) {
        if (l < s) tmp[l] += tmp[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) out[get_group_id(0)] = tmp[0];
    uint r = work_group_reduce_add(mine);
    if (l == 0) wg[get_group_id(0)] = r;
    back[get_global_id(0)] = keep;
}
"#;
    let program = ctx.build(src, OPTS);
    let k = program.kernel("tree");
    let kmax: usize = k
        .work_group_info(ctx.device, CL_KERNEL_WORK_GROUP_SIZE)
        .unwrap();
    assert!(kmax <= max_wg(&ctx));
    // The largest power of two the kernel takes (the tree needs one).
    let local = 1usize << (usize::BITS - 1 - kmax.leading_zeros());
    if testing_cranecl() {
        assert_eq!(
            local,
            max_wg(&ctx),
            "a small kernel takes the device maximum"
        );
    }
    let groups = 3;
    let n = local * groups;
    let mut rng = TestRng::new(0x5eed_1a29);
    let input: Vec<u32> = rng.vec(n, |r| r.next_u32() % 1000);
    let inb = ctx.buffer_from(&input);
    let out = ctx.buffer_zeroed::<u32>(groups);
    let wg = ctx.buffer_zeroed::<u32>(groups);
    let back = ctx.buffer_zeroed::<u32>(n);
    k.arg_buffer(0, &inb)
        .arg_buffer(1, &out)
        .arg_buffer(2, &wg)
        .arg_buffer(3, &back)
        .arg_local(4, local * 4);
    ctx.run(&k, &[n], Some(&[local]));
    let expect: Vec<u32> = input.chunks(local).map(|c| c.iter().sum()).collect();
    assert_eq!(
        ctx.read::<u32>(&out, groups),
        expect,
        "__local tree reduction"
    );
    assert_eq!(
        ctx.read::<u32>(&wg, groups),
        expect,
        "work_group_reduce_add"
    );
    let keep: Vec<u32> = (0..n).map(|i| input[i] * 3 + (i % local) as u32).collect();
    assert_eq!(
        ctx.read::<u32>(&back, n),
        keep,
        "private value across barriers"
    );
}

/// A kernel keeping a large private array across a barrier: its
/// `CL_KERNEL_WORK_GROUP_SIZE` is what it can run, it runs correctly there, and one
/// more work-item is refused.
#[test]
fn scratch_heavy_kernel_reports_what_it_can_launch() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void heavy(global uint *out, local uint *tmp, uint step) {
    uint a[4096];
    size_t l = get_local_id(0);
    for (int i = 0; i < 4096; i++) a[i] = (uint)(l * 7u + (uint)i);
    tmp[l] = (uint)l;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint s = tmp[(l + 1) % get_local_size(0)];
    for (uint i = 0; i < 4096; i += step) s += a[i];
    out[get_global_id(0)] = s;
}
"#;
    let program = ctx.build(src, OPTS);
    let k = program.kernel("heavy");
    let kmax: usize = k
        .work_group_info(ctx.device, CL_KERNEL_WORK_GROUP_SIZE)
        .unwrap();
    assert!(kmax >= 1 && kmax <= max_wg(&ctx));
    if testing_cranecl() {
        // 16 MiB of scratch for 1024 items keeping 16 KiB each across the barrier.
        assert_eq!(
            kmax,
            max_wg(&ctx),
            "16 KiB per work-item still takes the maximum"
        );
    }
    let local = kmax;
    let out = ctx.buffer_zeroed::<u32>(local);
    k.arg_buffer(0, &out).arg_local(1, local * 4).arg(2, 37u32);
    ctx.run(&k, &[local], Some(&[local]));
    let expect: Vec<u32> = (0..local)
        .map(|l| {
            let mut s = ((l + 1) % local) as u32;
            for i in (0..4096).step_by(37) {
                s += (l * 7 + i) as u32;
            }
            s
        })
        .collect();
    assert_eq!(ctx.read::<u32>(&out, local), expect);
    // Twice the kernel's maximum, each dimension within the device's per-dimension
    // limits, so only the total is wrong.
    let bigger = ctx.buffer_zeroed::<u32>(kmax * 2);
    k.arg_buffer(0, &bigger);
    let err = ctx
        .try_enqueue(&k, None, &[kmax, 2], Some(&[kmax, 2]))
        .err()
        .map(|e| e.code);
    assert_eq!(err, Some(CL_INVALID_WORK_GROUP_SIZE));
}
