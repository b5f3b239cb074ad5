//! Divergent control flow at every sub-group width (4, 8, 16 and 32 through
//! `intel_reqd_sub_group_size`), compared with host references. At widths 8 and 16
//! cranecl keeps the masks of divergent code packed into one vector (a lane per 16
//! or 8 bits) and unpacks them where lanes' values are blended or stored; widths 4
//! and 32 keep them as 32-bit lanes. The kernels use masks every way: lanes leaving
//! an escape-time loop one by one (some never enter), `break`, `continue` and a
//! `switch` inside a loop with stores under its mask, non-uniform sub-group
//! reductions and a ballot inside a divergent branch, and divergent branches and a
//! divergent loop between barriers, whose pending masks cross them. Work-group
//! sizes are not multiples of the width, so partial sub-groups run too.

use cranecl_conformance::*;

const SRC: &str = r#"
#define REQ __attribute__((intel_reqd_sub_group_size(SGW)))

kernel REQ void escape(global const int *a, global int *out, int maxit) {
    int g = get_global_id(0);
    int x = a[g], y = x * 7 + 3, it = 0;
    while (it < maxit && x > 1) {
        x = (x & 1) ? x * 3 + 1 : x >> 1;
        y ^= x + it;
        it++;
    }
    out[2 * g] = it;
    out[2 * g + 1] = y;
}

kernel REQ void masked_work(global const int *a, global int *out, int n) {
    int g = get_global_id(0);
    int v = a[g], acc = 0, k = 0;
    for (; k < n; k++) {
        int t = (v + k * 13) & 31;
        if (t == 7)
            break;
        if (t < 5)
            continue;
        switch (t & 3) {
        case 0: acc += t; break;
        case 1: acc ^= t << 3; break;
        case 2: out[3 * g + 2] = acc + k; break;
        default: acc -= 1;
        }
    }
    out[3 * g] = acc;
    out[3 * g + 1] = k;
}

kernel REQ void collectives(global const int *a, global int *out, int n) {
    int g = get_global_id(0);
    int v = a[g], s = 0;
    uint lanes = 0;
    for (int k = 0; k < n; k++) {
        if (((v >> k) & 1) != 0) {
            s += sub_group_non_uniform_reduce_add(v + k);
            uint4 b = sub_group_ballot(1);
            lanes ^= b.x + b.y * 3;
        }
    }
    out[2 * g] = s;
    out[2 * g + 1] = (int)lanes;
}

kernel REQ void between_barriers(global const int *a, global int *out, int rounds) {
    local int tile[LS];
    int l = get_local_id(0), g = get_global_id(0);
    int v = a[g], acc = 0;
    for (int r = 0; r < rounds; r++) {
        if ((v + r) % 3 == 0)
            tile[l] = v + r;
        else
            tile[l] = -(r + (v & 3));
        barrier(CLK_LOCAL_MEM_FENCE);
        int w = tile[(l + r + 1) % LS];
        if (w > 0 && (w & 1)) {
            acc += w;
        } else if (w < 0) {
            int c = 0;
            while (c < -w && c < 5)
                c++;
            acc -= c;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[g] = acc;
}
"#;

const LS: usize = 100;

fn inputs(seed: u64, n: usize, modulo: u32) -> Vec<i32> {
    let mut rng = TestRng::new(seed);
    rng.vec(n, |r| (r.next_u32() % modulo) as i32)
}

fn build(ctx: &DeviceContext, w: usize) -> Program {
    ctx.build(SRC, &format!("-cl-std=CL3.0 -DSGW={w} -DLS={LS}"))
}

fn widths(ctx: &DeviceContext) -> Vec<usize> {
    let w = ctx.sub_group_sizes();
    assert!(
        [4, 8, 16, 32].iter().all(|x| w.contains(x)),
        "sub-group sizes {w:?}"
    );
    vec![4, 8, 16, 32]
}

#[test]
fn escape_time_loop_keeps_each_lanes_exit_values() {
    let ctx = DeviceContext::new();
    let n = 1003;
    let input = inputs(3, n, 400);
    for w in widths(&ctx) {
        let prog = build(&ctx, w);
        for maxit in [0, 5, 300] {
            let a = ctx.buffer_from(&input);
            let o = ctx.buffer_zeroed::<i32>(2 * n);
            let k = prog.kernel("escape");
            k.arg_buffer(0, &a).arg_buffer(1, &o).arg(2, maxit);
            ctx.run(&k, &[n], Some(&[59]));
            let got = ctx.read::<i32>(&o, 2 * n);
            for (g, &x0) in input.iter().enumerate() {
                let (mut x, mut y, mut it) = (x0, x0.wrapping_mul(7).wrapping_add(3), 0);
                while it < maxit && x > 1 {
                    x = if x & 1 != 0 { x * 3 + 1 } else { x >> 1 };
                    y ^= x.wrapping_add(it);
                    it += 1;
                }
                assert_eq!(
                    (got[2 * g], got[2 * g + 1]),
                    (it, y),
                    "width {w}, maxit {maxit}, work-item {g} (input {x0})"
                );
            }
        }
    }
}

#[test]
fn break_continue_and_switch_store_under_the_loops_mask() {
    let ctx = DeviceContext::new();
    let n = 777;
    let input = inputs(5, n, 1 << 20);
    for w in widths(&ctx) {
        let prog = build(&ctx, w);
        for trips in [0, 3, 40] {
            let a = ctx.buffer_from(&input);
            let o = ctx.buffer_from(&vec![-1i32; 3 * n]);
            let k = prog.kernel("masked_work");
            k.arg_buffer(0, &a).arg_buffer(1, &o).arg(2, trips);
            ctx.run(&k, &[n], Some(&[37]));
            let got = ctx.read::<i32>(&o, 3 * n);
            for (g, &v) in input.iter().enumerate() {
                let (mut acc, mut k, mut stored) = (0i32, 0i32, -1i32);
                while k < trips {
                    let t = (v + k * 13) & 31;
                    if t == 7 {
                        break;
                    }
                    if t >= 5 {
                        match t & 3 {
                            0 => acc += t,
                            1 => acc ^= t << 3,
                            2 => stored = acc + k,
                            _ => acc -= 1,
                        }
                    }
                    k += 1;
                }
                assert_eq!(
                    &got[3 * g..3 * g + 3],
                    &[acc, k, stored],
                    "width {w}, {trips} trips, work-item {g} (input {v})"
                );
            }
        }
    }
}

#[test]
fn non_uniform_collectives_see_the_branchs_lanes() {
    let ctx = DeviceContext::new();
    let (n, local) = (1000, 50);
    let input = inputs(7, n, 1 << 12);
    for w in widths(&ctx) {
        let prog = build(&ctx, w);
        let trips = 12;
        let a = ctx.buffer_from(&input);
        let o = ctx.buffer_zeroed::<i32>(2 * n);
        let k = prog.kernel("collectives");
        k.arg_buffer(0, &a).arg_buffer(1, &o).arg(2, trips);
        ctx.run(&k, &[n], Some(&[local]));
        let got = ctx.read::<i32>(&o, 2 * n);
        for g in 0..n {
            // The work-item's sub-group: `w` consecutive local ids of its group.
            let base = g - g % local + (g % local) / w * w;
            let end = (base + w).min(g - g % local + local);
            let (mut s, mut lanes) = (0i32, 0u32);
            for k in 0..trips {
                if (input[g] >> k) & 1 == 0 {
                    continue;
                }
                let mut ballot = [0u32; 4];
                for j in base..end {
                    if (input[j] >> k) & 1 != 0 {
                        s += input[j] + k;
                        ballot[(j - base) / 32] |= 1 << ((j - base) % 32);
                    }
                }
                lanes ^= ballot[0].wrapping_add(ballot[1].wrapping_mul(3));
            }
            assert_eq!(
                (got[2 * g], got[2 * g + 1] as u32),
                (s, lanes),
                "width {w}, work-item {g}"
            );
        }
    }
}

#[test]
fn pending_masks_cross_barriers() {
    let ctx = DeviceContext::new();
    let groups = 6;
    let n = groups * LS;
    let input = inputs(9, n, 1000);
    for w in widths(&ctx) {
        let prog = build(&ctx, w);
        for rounds in [1, 7] {
            let a = ctx.buffer_from(&input);
            let o = ctx.buffer_zeroed::<i32>(n);
            let k = prog.kernel("between_barriers");
            k.arg_buffer(0, &a).arg_buffer(1, &o).arg(2, rounds);
            ctx.run(&k, &[n], Some(&[LS]));
            let got = ctx.read::<i32>(&o, n);
            for grp in 0..groups {
                let v = &input[grp * LS..(grp + 1) * LS];
                let mut acc = vec![0i32; LS];
                for r in 0..rounds {
                    let tile: Vec<i32> = v
                        .iter()
                        .map(|&x| {
                            if (x + r) % 3 == 0 {
                                x + r
                            } else {
                                -(r + (x & 3))
                            }
                        })
                        .collect();
                    for (l, a) in acc.iter_mut().enumerate() {
                        let x = tile[(l + r as usize + 1) % LS];
                        if x > 0 && x & 1 != 0 {
                            *a += x;
                        } else if x < 0 {
                            *a -= (-x).min(5);
                        }
                    }
                }
                assert_eq!(
                    &got[grp * LS..(grp + 1) * LS],
                    &acc[..],
                    "width {w}, {rounds} rounds, group {grp}"
                );
            }
        }
    }
}
