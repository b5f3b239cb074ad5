//! Huge kernels (thousands of statements, `tiers`): compiled as one general-layout
//! body at the smallest free width, they still compute what the host computes, on
//! ragged work-groups (partial sub-groups), with divergent loops, private arrays
//! indexed per work-item, struct copies and scattered stores.

mod common;
use common::*;

/// Statements per kernel: above the huge threshold (some 1.7 times it at width 8),
/// small enough for clang to take a few seconds.
const N: usize = 400;

/// Per-item private arrays (copied from global memory, indexed per lane) and
/// divergent loops, `N` statements; integer arithmetic so that the host reference
/// is exact.
fn source(reqd: &str) -> String {
    let mut s = format!(
        "{reqd} kernel void k(global const int *in, global int *out, global const int *ix, int m)\n{{\n  \
         size_t gid = get_global_id(0);\n  int x = ix[gid];\n  int acc = in[gid];\n"
    );
    for i in 0..N {
        match i % 3 {
            0 => s.push_str(&format!(
                "  {{ int p[4]; for (int j = 0; j < 4; j++) p[j] = in[gid + j + {i}]; \
                 p[(x + {i}) & 3] += acc; acc = acc * 3 + p[(x + {}) & 3]; }}\n",
                i + 1
            )),
            1 => s.push_str(&format!(
                "  for (int j = 0; j < ((x + {i}) & 3); j++) acc = acc * 5 + in[gid + j + {i}];\n"
            )),
            _ => s.push_str(&format!(
                "  if (x & {}) out[gid + {i} * m] = acc ^ {i}; else acc += in[(x & 63) + {i}];\n",
                1 << (i % 5)
            )),
        }
    }
    s.push_str("  out[gid] = acc;\n}\n");
    s
}

/// What the kernel computes for work-item `gid` (its final `out[gid]`), and the
/// scattered stores it makes.
fn reference(
    input: &[i32],
    ix: &[i32],
    gid: usize,
    m: usize,
    stores: &mut Vec<(usize, i32)>,
) -> i32 {
    let x = ix[gid];
    let mut acc = input[gid];
    for i in 0..N {
        match i % 3 {
            0 => {
                let mut p = [0i32; 4];
                for (j, v) in p.iter_mut().enumerate() {
                    *v = input[gid + j + i];
                }
                let a = (x.wrapping_add(i as i32) & 3) as usize;
                p[a] = p[a].wrapping_add(acc);
                let b = (x.wrapping_add(i as i32 + 1) & 3) as usize;
                acc = acc.wrapping_mul(3).wrapping_add(p[b]);
            }
            1 => {
                for j in 0..(x.wrapping_add(i as i32) & 3) as usize {
                    acc = acc.wrapping_mul(5).wrapping_add(input[gid + j + i]);
                }
            }
            _ => {
                if x & (1 << (i % 5)) != 0 {
                    stores.push((gid + i * m, acc ^ i as i32));
                } else {
                    acc = acc.wrapping_add(input[(x & 63) as usize + i]);
                }
            }
        }
    }
    acc
}

fn check(src: &str, want_width: u32) {
    let p = build(src);
    let k = kernel(&p, "k");
    assert_eq!(k.info.sub_group_width, want_width);
    // Ragged work-groups: partial sub-groups at the end of each.
    let (global, local) = (90usize, 30usize);
    let m = global;
    let len = global + N * m + 64;
    let mut input: Vec<i32> = (0..len as i32)
        .map(|i| i.wrapping_mul(7919) % 1000)
        .collect();
    let mut ix: Vec<i32> = (0..global as i32).map(|i| (i * 37) % 1000).collect();
    let mut out = vec![0i32; len];
    run(
        k,
        &[global],
        &[local],
        &[buf(&mut input), buf(&mut out), buf(&mut ix), val(m as i32)],
    );
    let mut want = vec![0i32; len];
    let mut stores = Vec::new();
    let mut finals = Vec::new();
    for gid in 0..global {
        finals.push(reference(&input, &ix, gid, m, &mut stores));
    }
    for (at, v) in stores {
        want[at] = v;
    }
    for (gid, v) in finals.into_iter().enumerate() {
        want[gid] = v;
    }
    for i in 0..len {
        assert_eq!(out[i], want[i], "out[{i}]");
    }
}

#[test]
fn huge_kernel_at_the_smallest_width() {
    check(&source(""), 4);
}

#[test]
fn huge_kernel_keeps_a_required_width() {
    check(&source("__attribute__((intel_reqd_sub_group_size(8)))"), 8);
}
