//! Single-lane blocks (`if (i == 0)` on an affine id) after the join of a block's
//! full and partial sub-group copies: the block's lane is computed at the branch and
//! reaches the block through a variable, so no value of one copy is used where the
//! other copy's path arrives (debug builds verify every function after lowering, and
//! used to fail here with "uses value ... from non-dominating inst").

mod common;
use common::*;

/// Vector work before the branch (so the entry block has full and partial copies),
/// then a single-lane block that reads and writes through its lane.
const SRC: &str = r#"
kernel void k(global float4 *a, float4 s, global uint *out, global const uint *in)
{
    size_t i = get_global_id(0);
    a[i] = a[i] * s;
    if (i == 3)
        out[i] = in[i] * 5u + (uint)i;
}
"#;

#[test]
fn single_lane_block_after_full_and_partial_copies() {
    for w in [4, 8, 16] {
        let p = build_w(SRC, w);
        let k = kernel(&p, "k");
        for (global, local) in [(32usize, 8usize), (21, 7), (5, 5)] {
            let mut a: Vec<f32> = (0..4 * global).map(|x| x as f32).collect();
            let s = [2.0f32, 3.0, 0.5, -1.0];
            let mut out = vec![0u32; global];
            let mut input: Vec<u32> = (0..global as u32).map(|x| 100 + x).collect();
            run(
                k,
                &[global],
                &[local],
                &[buf(&mut a), val(s), buf(&mut out), buf(&mut input)],
            );
            for (j, v) in a.iter().enumerate() {
                assert_eq!(*v, (j as f32) * s[j % 4], "w={w} a[{j}]");
            }
            for (j, o) in out.iter().enumerate() {
                let want = if j == 3 { 103 * 5 + 3 } else { 0 };
                assert_eq!(*o, want, "w={w} global={global} out[{j}]");
            }
        }
    }
}
