//! cl_khr_async_work_group_copy_fence: an export of `__local` data to global memory,
//! `async_work_group_copy_fence`, then an import of the same global memory (and the
//! reverse: an import, the fence, an export over the local memory it filled) see each
//! other's data, for several sub-groups per work-group, against a host reference.
//!
//! cranecl declares and implements the built-in but does not report the extension
//! (the CTS compiler suite fails a device reporting a `cl_khr_` name missing from its
//! approved list, as this one is). On another driver the test runs only where the
//! extension is reported.

use cranecl_conformance::*;

const EXT: &str = "cl_khr_async_work_group_copy_fence";

const SRC: &str = r#"
kernel void import_after_export(global int *g, global int *out, local int *l, int n) {
    size_t lid = get_local_id(0), ls = get_local_size(0), grp = get_group_id(0);
    for (int i = (int)lid; i < n; i += (int)ls) l[i] = (int)grp * 1000 + i;
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t e = async_work_group_copy(g + grp * n, l, (size_t)n, 0);
    async_work_group_copy_fence(CLK_GLOBAL_MEM_FENCE);
    e = async_work_group_copy(l + n, g + grp * n, (size_t)n, e);
    wait_group_events(1, &e);
    for (int i = (int)lid; i < n; i += (int)ls) out[grp * n + i] = l[n + i] * 2;
}
kernel void export_after_import(global const int *in, global int *g, local int *l, int n) {
    size_t grp = get_group_id(0);
    event_t e = async_work_group_copy(l, in + grp * n, (size_t)n, 0);
    async_work_group_copy_fence(CLK_LOCAL_MEM_FENCE);
    e = async_work_group_copy(g + grp * n, l, (size_t)n, e);
    wait_group_events(1, &e);
}
"#;

#[test]
fn copies_on_either_side_of_the_fence_see_each_other() {
    let ctx = DeviceContext::new();
    if testing_cranecl() {
        assert!(
            !ctx.has_extension(EXT),
            "{EXT} is not reported (see the module doc)"
        );
    } else if !require(ctx.has_extension(EXT), EXT) {
        return;
    }
    let program = ctx.build(SRC, "-cl-std=CL3.0 -Werror");
    let (groups, local, n) = (5usize, 32usize, 100usize);

    let k = program.kernel("import_after_export");
    let g = ctx.buffer_zeroed::<i32>(groups * n);
    let out = ctx.buffer_zeroed::<i32>(groups * n);
    k.arg_buffer(0, &g)
        .arg_buffer(1, &out)
        .arg_local(2, 2 * n * 4)
        .arg(3, n as i32);
    ctx.run(&k, &[groups * local], Some(&[local]));
    let exported: Vec<i32> = (0..groups * n)
        .map(|x| ((x / n) * 1000 + x % n) as i32)
        .collect();
    assert_eq!(ctx.read::<i32>(&g, groups * n), exported, "export");
    let doubled: Vec<i32> = exported.iter().map(|v| v * 2).collect();
    assert_eq!(
        ctx.read::<i32>(&out, groups * n),
        doubled,
        "import after the fence"
    );

    let k = program.kernel("export_after_import");
    let mut rng = TestRng::new(0xfe7c);
    let input: Vec<i32> = rng.vec(groups * n, |r| r.next_u32() as i32);
    let inb = ctx.buffer_from(&input);
    let g = ctx.buffer_zeroed::<i32>(groups * n);
    k.arg_buffer(0, &inb)
        .arg_buffer(1, &g)
        .arg_local(2, n * 4)
        .arg(3, n as i32);
    ctx.run(&k, &[groups * local], Some(&[local]));
    assert_eq!(
        ctx.read::<i32>(&g, groups * n),
        input,
        "export after the fence"
    );
}
