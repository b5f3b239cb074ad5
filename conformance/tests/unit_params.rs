//! Kernels whose integer parameters multiply a lane-affine index get a second copy
//! compiled for the parameter value 1 (`jit::analysis::unit_params`), picked per
//! launch by the argument values. Both copies must compute the same results: each
//! kernel runs with the parameter 1 (the unit copy) and with other values (the
//! general copy), checked against the host.

use cranecl_conformance::*;

/// pyopencl's `ReductionKernel` stage 1 (a sum of ints, group size 64): the input is
/// read at `pcl_start + (group base + lid) * pcl_step`, stepped by `64 * pcl_step`,
/// with a local-memory tree and barriers after the loop.
const REDUCTION: &str = r#"
#define GS 64
kernel void stage1(global int *out, global const int *in, long pcl_start, long pcl_step,
                   long pcl_stop, unsigned int pcl_seq_count, long n)
{
    local int ldata[GS];
    unsigned int lid = get_local_id(0);
    const long base = get_group_id(0) * GS * pcl_seq_count + lid;
    long i = pcl_start + base * pcl_step;
    int acc = 0;
    for (unsigned s = 0; s < pcl_seq_count; ++s) {
        if (i >= pcl_stop)
            break;
        acc += in[i];
        i += GS * pcl_step;
    }
    ldata[lid] = acc;
    for (unsigned size = GS / 2; size > 0; size /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < size)
            ldata[lid] += ldata[lid + size];
    }
    if (lid == 0)
        out[get_group_id(0)] = ldata[0];
}

kernel void scatter(global int *out, global const int *in, int stride, int offset)
{
    size_t gid = get_global_id(0);
    out[offset + (int)gid * stride] = in[gid] * 3 + 1;
}
"#;

/// The host's stage 1: each group's sum.
fn host_stage1(
    input: &[i32],
    start: i64,
    step: i64,
    stop: i64,
    seq: u32,
    groups: usize,
) -> Vec<i32> {
    const GS: i64 = 64;
    (0..groups)
        .map(|g| {
            let mut sum = 0i32;
            for lid in 0..GS {
                let base = g as i64 * GS * i64::from(seq) + lid;
                let mut i = start + base * step;
                for _ in 0..seq {
                    if i >= stop {
                        break;
                    }
                    sum = sum.wrapping_add(input[i as usize]);
                    i += GS * step;
                }
            }
            sum
        })
        .collect()
}

#[test]
fn reduction_stage1_matches_host_for_every_step() {
    let ctx = DeviceContext::new();
    let program = ctx.build(REDUCTION, "");
    let k = program.kernel("stage1");
    let n = 20_000usize;
    let input: Vec<i32> = (0..n as i32).map(|i| (i * 37) % 1001 - 500).collect();
    let bin = ctx.buffer_from(&input);
    // (start, step, seq_count, groups): unit steps with partial last groups, then
    // strided views of the same array (the general copy).
    for (start, step, seq, groups) in [
        (0i64, 1i64, 4u32, 79usize),
        (5, 1, 16, 20),
        (0, 1, 1, 313),
        (1, 2, 4, 40),
        (7, 3, 8, 14),
        (0, 5, 2, 32),
    ] {
        let stop = n as i64;
        let bout = ctx.buffer_from(&vec![i32::MIN; groups]);
        k.arg_buffer(0, &bout)
            .arg_buffer(1, &bin)
            .arg(2, start)
            .arg(3, step)
            .arg(4, stop)
            .arg(5, seq)
            .arg(6, n as i64);
        ctx.run(&k, &[groups * 64], Some(&[64]));
        let got: Vec<i32> = ctx.read(&bout, groups);
        let want = host_stage1(&input, start, step, stop, seq, groups);
        assert_eq!(
            got, want,
            "start {start} step {step} seq {seq} groups {groups}"
        );
    }
}

#[test]
fn scatter_matches_host_for_unit_and_other_strides() {
    let ctx = DeviceContext::new();
    let program = ctx.build(REDUCTION, "");
    let k = program.kernel("scatter");
    let n = 1000usize;
    let input: Vec<i32> = (0..n as i32).map(|i| i * 7 - 300).collect();
    let bin = ctx.buffer_from(&input);
    for (stride, offset) in [(1i32, 0i32), (1, 13), (3, 2), (2, 0)] {
        let len = offset as usize + n * stride as usize + 8;
        let bout = ctx.buffer_from(&vec![-1i32; len]);
        k.arg_buffer(0, &bout)
            .arg_buffer(1, &bin)
            .arg(2, stride)
            .arg(3, offset);
        ctx.run(&k, &[n], Some(&[40]));
        let got: Vec<i32> = ctx.read(&bout, len);
        let mut want = vec![-1i32; len];
        for (g, v) in input.iter().enumerate() {
            want[offset as usize + g * stride as usize] = v * 3 + 1;
        }
        if let Some(i) = (0..len).find(|&i| got[i] != want[i]) {
            panic!(
                "stride {stride} offset {offset}: out[{i}] = {}, host {}",
                got[i], want[i]
            );
        }
    }
}
