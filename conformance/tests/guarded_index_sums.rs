//! `int` indices made of a uniform part and a local id with no no-wrap flags
//! (`(int)((long)begin + get_local_id(0))`, pyopencl's scan and sort with `index_type`
//! `int`): such a sum wraps at 2^31 between lanes when the uniform part is near
//! `INT_MAX`, so its lanes widen to `long` in affine form only where the work-group's
//! entry checked the uniform part's range; elsewhere each lane must be sign-extended on
//! its own. Every case is compared with the same wrapping arithmetic on the host:
//! sums far from the wrap, work-groups whose lanes cross it (inside one sub-group and
//! between sub-groups), negative sums, and the strided update loop of pyopencl's
//! `scan_final_update`.

use cranecl_conformance::*;

/// `out[gid] = (long)i` and `out[n + gid] = a[(long)i - off]` for
/// `i = (int)((long)(base + step * group) + lid)` (the second only where `i - off`
/// indexes `a`), with or without a required work-group size of 16.
fn widen_source(reqd: bool) -> String {
    let attr = if reqd {
        "__attribute__((reqd_work_group_size(16, 1, 1)))"
    } else {
        ""
    };
    format!(
        "kernel {attr} void widen(global long* out, global const int* a, int base, int step,\n\
         \x20                   long off, int len) {{\n\
         \x20   int begin = base + step * (int)get_group_id(0);\n\
         \x20   int i = (int)((long)begin + (long)get_local_id(0));\n\
         \x20   size_t g = get_global_id(0);\n\
         \x20   out[g] = (long)i;\n\
         \x20   long j = (long)i - off;\n\
         \x20   out[get_global_size(0) + g] = (j >= 0 && j < len) ? a[j] : -1;\n\
         }}\n"
    )
}

#[test]
fn widened_sums_match_the_host_on_both_sides_of_the_wrap() {
    let ctx = DeviceContext::new();
    let len = 4096usize;
    let a: Vec<i32> = (0..len as i32).map(|x| x * 7 + 3).collect();
    let ba = ctx.buffer_from(&a);
    let max = i64::from(i32::MAX);
    // (base, step, off): far from the wrap, crossing it inside a work-group of 16 at
    // various lanes (inside a sub-group and on a sub-group boundary), negative, and
    // a step that makes later groups wrap.
    let cases: [(i64, i64, i64); 8] = [
        (0, 64, 0),
        (1000, 16, 900),
        (max - 5, 16, max - 2000),
        (max - 8, 16, max - 2000),
        (max - 21, 16, max - 2000),
        (-300, 16, -300),
        (i64::from(i32::MIN), 16, i64::from(i32::MIN)),
        (max - 100, 32, max - 1000),
    ];
    for reqd in [true, false] {
        let kernel = ctx.kernel(&widen_source(reqd), "", "widen");
        let groups = 8usize;
        let n = groups * 16;
        let out = ctx.buffer_zeroed::<i64>(2 * n);
        for &(base, step, off) in &cases {
            kernel
                .arg_buffer(0, &out)
                .arg_buffer(1, &ba)
                .arg(2, base as i32)
                .arg(3, step as i32)
                .arg(4, off)
                .arg(5, len as i32);
            ctx.run(&kernel, &[n], Some(&[16usize][..]));
            let got = ctx.read::<i64>(&out, 2 * n);
            for g in 0..n {
                let (grp, lid) = ((g / 16) as i64, (g % 16) as i64);
                let begin = (base as i32).wrapping_add((step as i32).wrapping_mul(grp as i32));
                let i = i64::from((i64::from(begin) + lid) as i32);
                let j = i - off;
                let val = if (0..len as i64).contains(&j) {
                    i64::from(a[j as usize])
                } else {
                    -1
                };
                assert_eq!(
                    [got[g], got[n + g]],
                    [i, val],
                    "reqd={reqd} base={base} step={step} off={off} item {g}"
                );
            }
        }
    }
}

/// pyopencl's `scan_final_update` with `index_type` `int`: work-group `g` adds
/// `carry[g]` to its interval of `partial`, 16 items at a time.
const UPDATE: &str = "\
kernel __attribute__((reqd_work_group_size(16, 1, 1)))
void update(global const int* partial, global int* out, global const int* carry,
            int n, int interval) {
    int begin = interval * (int)get_group_id(0);
    int end = min(begin + interval, n);
    int c = get_group_id(0) ? carry[get_group_id(0) - 1] : 0;
    for (int i = (int)((long)begin + (long)get_local_id(0)); i < end; i += 16)
        out[i] = partial[i] + c;
}
";

#[test]
fn strided_update_loop_matches_the_host() {
    let ctx = DeviceContext::new();
    let kernel = ctx.kernel(UPDATE, "", "update");
    for (n, groups) in [(4096usize, 4usize), (1000, 3), (77, 2), (5000, 7)] {
        let interval = n.div_ceil(groups);
        let partial: Vec<i32> = (0..n as i32).map(|x| x * 3 - 1000).collect();
        let carry: Vec<i32> = (0..groups as i32).map(|g| g * 100_003 + 17).collect();
        let bp = ctx.buffer_from(&partial);
        let bc = ctx.buffer_from(&carry);
        let out = ctx.buffer_zeroed::<i32>(n);
        kernel
            .arg_buffer(0, &bp)
            .arg_buffer(1, &out)
            .arg_buffer(2, &bc)
            .arg(3, n as i32)
            .arg(4, interval as i32);
        ctx.run(&kernel, &[groups * 16], Some(&[16usize][..]));
        let got = ctx.read::<i32>(&out, n);
        for i in 0..n {
            let g = i / interval;
            let want = partial[i] + if g > 0 { carry[g - 1] } else { 0 };
            assert_eq!(got[i], want, "n={n} groups={groups} item {i}");
        }
    }
}
