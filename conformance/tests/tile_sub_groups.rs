//! Tile kernels: a `reqd_work_group_size` with rows of 16 work-items in 2-D or 3-D and
//! no divergent branch, which cranecl compiles with one sub-group per row (width 16)
//! rather than its default width. Checks that such kernels compute what the host
//! computes (a `__local` tile transpose with a barrier, in 2-D and 3-D shapes) and
//! that what the kernel sees of its sub-groups agrees with the API's queries.

use cranecl_conformance::consts::*;
use cranecl_conformance::*;

const TRANSPOSE: &str = r#"
#define TX 16
kernel __attribute__((reqd_work_group_size(TX, TY, TZ)))
void transpose(global const float *in, global float *out, int w, int h) {
    local float tile[TZ][TY][TX + 1];
    int lx = get_local_id(0), ly = get_local_id(1), lz = get_local_id(2);
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    tile[lz][ly][lx] = in[(z * h + y) * w + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    // Each group writes back its own tile, mirrored within the tile's rows.
    out[(z * h + y) * w + x] = tile[lz][ly][TX - 1 - lx] + (float)(lz * 1000);
}
"#;

/// The transposing kernel over a `w` x `h` x `d` volume with the required size
/// `[16, ty, tz]`, against the host.
fn check_tile(ctx: &DeviceContext, ty: usize, tz: usize, w: usize, h: usize, d: usize) {
    let options = format!("-cl-std=CL3.0 -DTY={ty} -DTZ={tz}");
    let program = ctx.build(TRANSPOSE, &options);
    let n = w * h * d;
    let input: Vec<f32> = (0..n).map(|i| (i as f32) * 0.5 - 7.0).collect();
    let inb = ctx.buffer_from(&input);
    let out = ctx.buffer_zeroed::<f32>(n);
    let k = program.kernel("transpose");
    k.arg_buffer(0, &inb)
        .arg_buffer(1, &out)
        .arg(2, w as i32)
        .arg(3, h as i32);
    ctx.run(&k, &[w, h, d], Some(&[16, ty, tz]));
    let mut expect = vec![0f32; n];
    for z in 0..d {
        for y in 0..h {
            for x in 0..w {
                let mirrored = (x / 16) * 16 + (15 - x % 16);
                let lz = z % tz;
                expect[(z * h + y) * w + x] =
                    input[(z * h + y) * w + mirrored] + (lz * 1000) as f32;
            }
        }
    }
    assert_eq!(
        ctx.read::<f32>(&out, n),
        expect,
        "tile 16x{ty}x{tz} over {w}x{h}x{d}"
    );
}

#[test]
fn tile_kernels_with_rows_of_16_compute_right() {
    let ctx = DeviceContext::new();
    check_tile(&ctx, 16, 1, 64, 48, 1);
    check_tile(&ctx, 4, 1, 32, 12, 1);
    check_tile(&ctx, 2, 2, 48, 4, 6);
}

const SUB_GROUPS: &str = r#"
kernel __attribute__((reqd_work_group_size(16, 8, 1)))
void facts(global uint *out) {
    uint l = get_local_linear_id();
    size_t g = get_group_id(0) + get_num_groups(0) * get_group_id(1);
    global uint *o = out + (g * 128 + l) * 5;
    o[0] = get_sub_group_size();
    o[1] = get_max_sub_group_size();
    o[2] = get_num_sub_groups();
    o[3] = get_sub_group_id() * get_max_sub_group_size() + get_sub_group_local_id();
    o[4] = sub_group_reduce_add(1u);
}
"#;

#[test]
fn tile_kernel_sub_groups_agree_with_the_queries() {
    let ctx = DeviceContext::new();
    if !require(
        ctx.has_extension("cl_khr_subgroups"),
        "cl_khr_subgroups for sub-group built-ins",
    ) {
        return;
    }
    let program = ctx.build(SUB_GROUPS, "-cl-std=CL3.0");
    let k = program.kernel("facts");
    let groups = 3 * 2;
    let out = ctx.buffer_zeroed::<u32>(groups * 128 * 5);
    k.arg_buffer(0, &out);
    ctx.run(&k, &[48, 16], Some(&[16, 8]));
    let max: usize = k
        .sub_group_info(
            ctx.device,
            CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE_KHR,
            &[16usize, 8],
        )
        .unwrap();
    let count: usize = k
        .sub_group_info(
            ctx.device,
            CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE_KHR,
            &[16usize, 8],
        )
        .unwrap();
    assert!((1..=128).contains(&max), "max sub-group size {max}");
    assert_eq!(count, 128usize.div_ceil(max), "sub-group count");
    let facts = ctx.read::<u32>(&out, groups * 128 * 5);
    for (i, f) in facts.chunks(5).enumerate() {
        let l = (i % 128) as u32;
        assert_eq!(f[1] as usize, max, "item {i}: get_max_sub_group_size");
        assert_eq!(f[2] as usize, count, "item {i}: get_num_sub_groups");
        assert_eq!(
            f[3], l,
            "item {i}: sub-group id and local id give the linear id"
        );
        let sg = l as usize / max;
        let size = max.min(128 - sg * max) as u32;
        assert_eq!(f[0], size, "item {i}: get_sub_group_size");
        assert_eq!(f[4], size, "item {i}: sub_group_reduce_add(1)");
    }
}
