//! Divergent branches on `||`, `&&` and `!` of comparisons between an affine id and
//! a uniform value (`gx == 0 || gy == 0 || gx == W - 1`), which the jit decides for
//! the whole sub-group from scalar tests when every lane or no lane holds
//! (`jit::lower::affine_cmp`, `masked::branch_decided`) and takes both edges under
//! masks otherwise. Checked against the host on grids where sub-groups are all
//! true, all false and mixed, for equality with strides 1 and -1, inequality,
//! ordered comparisons, uniform operands, partial sub-groups, ragged work-groups and
//! rows that are not whole sub-groups.

use cranecl_conformance::*;

const SRC: &str = r#"
kernel void decided(global const int *in, global int *out, int a, int b, int c, uint u)
{
    int gx = get_global_id(0), gy = get_global_id(1);
    int g = gy * (int)get_global_size(0) + gx;
    int lx = get_local_id(0);
    int v0 = -1, v1 = -1, v2 = -1, v3 = -1, v4 = -1, v5 = -1;
    if (gx == a || gy == b || gx == c)
        v0 = in[g];
    if (gx != a && gx != c)
        v1 = in[g] + 1;
    if (!(a - gx == 3) && gy != b)
        v2 = in[g] + 2;
    if ((gx >= a && gx < c) || gy == b + 1)
        v3 = in[g] + 3;
    if (lx == (int)u || !(gx > c))
        v4 = in[g] + 4;
    if (!(gx == a || gx == c) && (gy == b || gx <= a + 20))
        v5 = in[g] + 5;
    out[6 * g + 0] = v0;
    out[6 * g + 1] = v1;
    out[6 * g + 2] = v2;
    out[6 * g + 3] = v3;
    out[6 * g + 4] = v4;
    out[6 * g + 5] = v5;
}
"#;

#[allow(clippy::too_many_arguments)]
fn host(
    input: &[i32],
    gw: usize,
    gh: usize,
    lw: usize,
    a: i32,
    b: i32,
    c: i32,
    u: u32,
) -> Vec<i32> {
    let mut out = vec![0; 6 * gw * gh];
    for gy in 0..gh as i32 {
        for gx in 0..gw as i32 {
            let g = (gy * gw as i32 + gx) as usize;
            let lx = gx % lw as i32;
            let x = input[g];
            let pick = |cond: bool, add: i32| if cond { x + add } else { -1 };
            out[6 * g] = pick(gx == a || gy == b || gx == c, 0);
            out[6 * g + 1] = pick(gx != a && gx != c, 1);
            out[6 * g + 2] = pick(a - gx != 3 && gy != b, 2);
            out[6 * g + 3] = pick((gx >= a && gx < c) || gy == b + 1, 3);
            out[6 * g + 4] = pick(lx == u as i32 || gx <= c, 4);
            out[6 * g + 5] = pick(!(gx == a || gx == c) && (gy == b || gx <= a + 20), 5);
        }
    }
    out
}

#[test]
fn decided_branches_agree_with_the_host() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SRC, "-cl-std=CL3.0");
    let k = program.kernel("decided");
    let shapes: [([usize; 2], [usize; 2]); 6] = [
        ([64, 6], [16, 2]),
        ([37, 5], [16, 4]),
        ([40, 4], [20, 2]),
        ([36, 4], [12, 2]),
        ([96, 3], [32, 1]),
        ([30, 4], [10, 4]),
    ];
    for (global, local) in shapes {
        let (gw, gh) = (global[0], global[1]);
        let n = gw * gh;
        let input: Vec<i32> = (0..n as i32).map(|i| i * 31 - 7).collect();
        let inb = ctx.buffer_from(&input);
        for (a, b, c, u) in [
            (0i32, 0i32, 35i32, 0u32),
            (17, 2, 18, 5),
            (3, 1, 11, 7),
            (-5, 9, 1000, 3),
            (24, 3, 47, 9),
        ] {
            let out = ctx.buffer_zeroed::<i32>(6 * n);
            k.arg_buffer(0, &inb)
                .arg_buffer(1, &out)
                .arg(2, a)
                .arg(3, b)
                .arg(4, c)
                .arg(5, u);
            ctx.run(&k, &global, Some(&local));
            let got = ctx.read::<i32>(&out, 6 * n);
            let want = host(&input, gw, gh, local[0], a, b, c, u);
            for (i, (x, y)) in got.iter().zip(&want).enumerate() {
                let g = i / 6;
                assert_eq!(
                    x,
                    y,
                    "condition {} at ({}, {}); global {global:?} local {local:?} a {a} b {b} c {c} u {u}",
                    i % 6,
                    g % gw,
                    g / gw
                );
            }
        }
    }
}
