//! Values used after loops that every work-item of a sub-group leaves in the same
//! iteration (a uniform trip count): cranecl keeps no per-lane copy of them taken at
//! the exit. Those the latch passes to a header phi are read after the loop from that
//! phi's accumulator (the latch writes it for every lane before the loop ends); the
//! rest live in variables. Each kernel has a divergent store, so that it is lowered
//! with masks. Checked against the host: varying int4 and short8 accumulators with
//! uniform and affine ones beside them (do-while and for loops), last-iteration
//! values of a do-while, a loop left from its middle, a loop inside a branch some
//! work-items skip, an inner uniform loop inside an outer loop that work-items leave
//! apart, and a loop holding barriers; partial sub-groups and empty trip counts
//! included.

use cranecl_conformance::*;

const SRC: &str = r#"
/* Each kernel ends in a store only some work-items make: a divergent branch, so
   that cranecl lowers it with masks (a kernel without one keeps real branches). */

kernel void carried(global const int *a, global int *out, int n, int stride) {
    size_t g = get_global_id(0);
    int4 acc = (int4)(1, 2, 3, (int)g);
    short8 sh = (short8)((short)g);
    int s = 0, k = 0;
    do {
        int x = a[k * stride + g];
        acc = acc * 3 + (int4)(x, x + 1, x ^ 5, x >> 1);
        sh = sh * (short)5 + (short8)((short)x, (short)(x + k), 0, 1, 2, 3, 4, (short)k);
        s += a[k * stride];
        k++;
    } while (k < n);
    global int *o = out + 9 * g;
    o[0] = acc.x; o[1] = acc.y; o[2] = acc.z; o[3] = acc.w;
    o[4] = s; o[5] = k; o[6] = sh.s0 + sh.s1; o[7] = sh.s7 - sh.s4;
    if (g % 3 == 1)
        o[8] = acc.x ^ k;
}

kernel void carried_for(global const int *a, global int *out, int n, int stride) {
    size_t g = get_global_id(0);
    int4 acc = (int4)(1, 2, 3, (int)g);
    int k;
    for (k = 0; k < n; k++) {
        int x = a[k * stride + g];
        acc = acc * 3 + (int4)(x, x + 1, x ^ 5, x >> 1);
    }
    global int *o = out + 6 * g;
    o[0] = acc.x; o[1] = acc.y; o[2] = acc.z; o[3] = acc.w; o[4] = k;
    if (g % 3 == 1)
        o[5] = acc.y ^ k;
}

kernel void last_value(global const int *a, global int *out, int n, int stride) {
    size_t g = get_global_id(0);
    int k = 0, t, u;
    do {
        t = a[k * stride + g] * 2 + k;
        u = t ^ (int)g;
        k++;
    } while (k < n);
    int m = 0, acc = (int)g;
    for (;;) {
        acc = acc * 3 + a[m * stride + g];
        if (a[m * stride] > 1000)
            break;
        m++;
        if (m >= n)
            break;
    }
    global int *o = out + 5 * g;
    o[0] = t; o[1] = u; o[2] = acc; o[3] = m;
    if (g % 3 == 1)
        o[4] = t - acc;
}

kernel void in_branch(global const int *a, global int *out, int n, int stride) {
    size_t g = get_global_id(0);
    int acc = -1, k = -1;
    if (g % 3 != 1) {
        acc = (int)g;
        k = 0;
        do {
            acc = acc * 5 + a[k * stride + g];
            k++;
        } while (k < n);
        out[2 * g + 1] = k;
    }
    out[2 * g] = acc;
}

kernel void nested(global const int *a, global const int *lim, global int *out, int n,
                   int stride) {
    size_t g = get_global_id(0);
    int acc = 0, j = 0, inner = 0, last = 0;
    do {
        inner = j;
        int k = 0;
        do {
            inner = inner * 3 + a[k * stride + g];
            k++;
        } while (k < n);
        acc += inner ^ j;
        last = inner;
        j++;
    } while (j < lim[g]);
    out[2 * g] = acc;
    out[2 * g + 1] = last;
}

kernel void with_barrier(global const int *a, global int *out, local int *tile, int n,
                         int stride) {
    int l = get_local_id(0), lsz = get_local_size(0);
    size_t g = get_global_id(0);
    int acc = l, t = 0;
    do {
        tile[l] = a[t * stride + g];
        barrier(CLK_LOCAL_MEM_FENCE);
        acc = acc * 3 + tile[(l + 1) % lsz] - tile[l];
        barrier(CLK_LOCAL_MEM_FENCE);
        t++;
    } while (t < n);
    out[2 * g] = acc;
    if (g % 3 == 1)
        out[2 * g + 1] = acc ^ t;
}
"#;

/// Sizes run: (global, local) with partial sub-groups (31), and full ones.
const SHAPES: [(usize, usize); 2] = [(93, 31), (128, 64)];
/// Row stride of the input (at least every global size).
const STRIDE: usize = 128;

/// Input rows; `spike` puts a value above 1000 at the start of that row (the middle
/// exit of `last_value`).
fn input(rows: usize, spike: Option<usize>) -> Vec<i32> {
    let mut a: Vec<i32> = (0..rows.max(1) * STRIDE)
        .map(|i| (i as i32 * 37 % 101) - 50)
        .collect();
    if let Some(r) = spike {
        a[r * STRIDE] = 5000;
    }
    a
}

/// Whether work-item `g` makes the kernels' extra (divergent) store.
fn marked(g: usize) -> bool {
    g % 3 == 1
}

/// `acc * 3 + (x, x + 1, x ^ 5, x >> 1)` on an int4.
fn step4(acc: &mut [i32; 4], x: i32) {
    let add = [x, x.wrapping_add(1), x ^ 5, x >> 1];
    for (v, d) in acc.iter_mut().zip(add) {
        *v = v.wrapping_mul(3).wrapping_add(d);
    }
}

fn host_carried(a: &[i32], items: usize, _local: usize, n: usize) -> Vec<i32> {
    let mut out = Vec::new();
    for g in 0..items {
        let mut acc = [1i32, 2, 3, g as i32];
        let mut sh = [g as i16; 8];
        let mut s = 0i32;
        let trips = n.max(1);
        for k in 0..trips {
            let x = a[k * STRIDE + g];
            step4(&mut acc, x);
            let adds = [
                x as i16,
                x.wrapping_add(k as i32) as i16,
                0,
                1,
                2,
                3,
                4,
                k as i16,
            ];
            for (v, d) in sh.iter_mut().zip(adds) {
                *v = v.wrapping_mul(5).wrapping_add(d);
            }
            s = s.wrapping_add(a[k * STRIDE]);
        }
        // short + short is int arithmetic in OpenCL C.
        let pair = sh[0] as i32 + sh[1] as i32;
        let diff = sh[7] as i32 - sh[4] as i32;
        let k = trips as i32;
        let mark = if marked(g) { acc[0] ^ k } else { 0 };
        out.extend([acc[0], acc[1], acc[2], acc[3], s, k, pair, diff, mark]);
    }
    out
}

fn host_carried_for(a: &[i32], items: usize, _local: usize, n: usize) -> Vec<i32> {
    let mut out = Vec::new();
    for g in 0..items {
        let mut acc = [1i32, 2, 3, g as i32];
        for k in 0..n {
            step4(&mut acc, a[k * STRIDE + g]);
        }
        let k = n as i32;
        let mark = if marked(g) { acc[1] ^ k } else { 0 };
        out.extend([acc[0], acc[1], acc[2], acc[3], k, mark]);
    }
    out
}

fn host_last_value(a: &[i32], items: usize, _local: usize, n: usize) -> Vec<i32> {
    let mut out = Vec::new();
    for g in 0..items {
        let mut k = 0usize;
        let (t, u) = loop {
            let t = a[k * STRIDE + g].wrapping_mul(2).wrapping_add(k as i32);
            k += 1;
            if k >= n {
                break (t, t ^ g as i32);
            }
        };
        let (mut m, mut acc) = (0usize, g as i32);
        loop {
            acc = acc.wrapping_mul(3).wrapping_add(a[m * STRIDE + g]);
            if a[m * STRIDE] > 1000 {
                break;
            }
            m += 1;
            if m >= n {
                break;
            }
        }
        let mark = if marked(g) { t.wrapping_sub(acc) } else { 0 };
        out.extend([t, u, acc, m as i32, mark]);
    }
    out
}

fn host_in_branch(a: &[i32], items: usize, _local: usize, n: usize) -> Vec<i32> {
    let mut out = Vec::new();
    for g in 0..items {
        if marked(g) {
            out.extend([-1, 0]);
            continue;
        }
        let mut acc = g as i32;
        for k in 0..n.max(1) {
            acc = acc.wrapping_mul(5).wrapping_add(a[k * STRIDE + g]);
        }
        out.extend([acc, n.max(1) as i32]);
    }
    out
}

fn host_nested(a: &[i32], lim: &[i32], n: usize) -> Vec<i32> {
    let mut out = Vec::new();
    for (g, &l) in lim.iter().enumerate() {
        let (mut acc, mut j) = (0i32, 0i32);
        let last = loop {
            let mut inner = j;
            for k in 0..n.max(1) {
                inner = inner.wrapping_mul(3).wrapping_add(a[k * STRIDE + g]);
            }
            acc = acc.wrapping_add(inner ^ j);
            j += 1;
            if j >= l {
                break inner;
            }
        };
        out.extend([acc, last]);
    }
    out
}

fn host_with_barrier(a: &[i32], items: usize, local: usize, n: usize) -> Vec<i32> {
    let mut out = Vec::new();
    for g in 0..items {
        let (l, base) = (g % local, g - g % local);
        let mut acc = l as i32;
        for t in 0..n.max(1) {
            let next = a[t * STRIDE + base + (l + 1) % local];
            acc = acc
                .wrapping_mul(3)
                .wrapping_add(next)
                .wrapping_sub(a[t * STRIDE + g]);
        }
        let mark = if marked(g) { acc ^ n.max(1) as i32 } else { 0 };
        out.extend([acc, mark]);
    }
    out
}

/// A host reference: (input, work-items, work-group size, n) -> the output.
type Host = fn(&[i32], usize, usize, usize) -> Vec<i32>;

/// Runs `name` (arguments: input, output, with `tile` a `__local` int per work-item,
/// n, stride) over every shape and (n, spike) case, and compares `per_item` ints per
/// work-item with `host`.
fn check_kernel(
    name: &str,
    per_item: usize,
    cases: &[(usize, Option<usize>)],
    tile: bool,
    host: Host,
) {
    let ctx = DeviceContext::new();
    let program = ctx.build(SRC, "-cl-std=CL3.0");
    let k = program.kernel(name);
    for (items, local) in SHAPES {
        for &(n, spike) in cases {
            let a = input(n, spike);
            let ab = ctx.buffer_from(&a);
            let out = ctx.buffer_zeroed::<i32>(per_item * items);
            k.arg_buffer(0, &ab).arg_buffer(1, &out);
            let next = if tile {
                k.arg_local(2, 4 * local);
                3
            } else {
                2
            };
            k.arg(next, n as i32).arg(next + 1, STRIDE as i32);
            ctx.run(&k, &[items], Some(&[local]));
            assert_eq!(
                ctx.read::<i32>(&out, per_item * items),
                host(&a, items, local, n),
                "{name}, {items} items in groups of {local}, n = {n}, spike {spike:?}"
            );
        }
    }
}

/// (n, no spike) cases.
fn trips(ns: &[usize]) -> Vec<(usize, Option<usize>)> {
    ns.iter().map(|&n| (n, None)).collect()
}

#[test]
fn accumulators_and_counters_of_uniform_loops_are_right_after_them() {
    check_kernel("carried", 9, &trips(&[0, 1, 2, 7]), false, host_carried);
    check_kernel(
        "carried_for",
        6,
        &trips(&[0, 1, 7]),
        false,
        host_carried_for,
    );
}

#[test]
fn uniform_loops_inside_a_branch_some_work_items_skip() {
    check_kernel("in_branch", 2, &trips(&[0, 5]), false, host_in_branch);
}

#[test]
fn last_iteration_values_and_middle_exits_are_right_after_uniform_loops() {
    let cases = [(1, None), (6, None), (6, Some(3)), (6, Some(0))];
    check_kernel("last_value", 5, &cases, false, host_last_value);
}

#[test]
fn uniform_loops_holding_barriers_pass_their_sums_on() {
    check_kernel("with_barrier", 2, &trips(&[0, 3]), true, host_with_barrier);
}

#[test]
fn uniform_inner_loops_inside_loops_work_items_leave_apart() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SRC, "-cl-std=CL3.0");
    let k = program.kernel("nested");
    for (items, local) in SHAPES {
        let n = 4usize;
        let a = input(n, None);
        let ab = ctx.buffer_from(&a);
        let lim: Vec<i32> = (0..items as i32).map(|g| 1 + g % 5).collect();
        let limb = ctx.buffer_from(&lim);
        let out = ctx.buffer_zeroed::<i32>(2 * items);
        k.arg_buffer(0, &ab)
            .arg_buffer(1, &limb)
            .arg_buffer(2, &out)
            .arg(3, n as i32)
            .arg(4, STRIDE as i32);
        ctx.run(&k, &[items], Some(&[local]));
        assert_eq!(
            ctx.read::<i32>(&out, 2 * items),
            host_nested(&a, &lim, n),
            "nested, {items} items in groups of {local}"
        );
    }
}
