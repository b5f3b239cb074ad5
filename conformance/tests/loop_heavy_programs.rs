//! Kernels with hundreds of sequential loops, which cranecl optimises with LLVM's `opt`
//! and a pipeline without loop passes instead of clang's `-O2` (whose loop passes cost
//! the square of the loop count): the results must be the same as on the host, with
//! per-work-item trip counts, loops that read memory, loops nested in loops, and
//! private arrays filled by loops (also by loops of the same trip count in every
//! work-item: `build_scale`'s `arrays` shape, a kernel without divergent branches).
//! Kernels with over 1000 conditional branches take the same pipeline, over 2000 a
//! minimal one ([`branches_source`]). Before that pipeline, locals whose scopes do not overlap
//! share one slot (`runtime/src/build/shared_slots.rs`): [`scopes_source`] mixes the
//! scopes that sharing must get right. Integer arithmetic, so every result is exact.

use cranecl_conformance::*;

/// Work-items of each launch: a full sub-group and a partial one.
const ITEMS: usize = 45;

/// A kernel of `loops` loops; loop `i` runs `(x + i) & 3` times (x per work-item) and
/// folds `input` into `acc`; every 7th loop holds an inner loop, every 5th fills and
/// indexes a private array.
fn source(loops: usize) -> String {
    let mut s = String::from(
        "kernel void k(global const uint *input, global const int *ix, global uint *out)\n{\n  \
         size_t gid = get_global_id(0);\n  int x = ix[gid];\n  uint acc = input[gid & 63];\n",
    );
    for i in 0..loops {
        let body = match (i % 7, i % 5) {
            (0, _) => format!(
                "for (int k = 0; k < (j & 1) + 1; k++) acc = acc * 3u + input[(gid + j + k + {i}) & 63];"
            ),
            (_, 0) => format!(
                "uint p[4]; for (int q = 0; q < 4; q++) p[q] = input[(gid + q + {i}) & 63]; \
                 acc = acc * 5u + p[(x + j) & 3];"
            ),
            _ => format!("acc = acc * {}u + input[(gid + j + {i}) & 63];", 3 + 2 * (i % 4)),
        };
        s.push_str(&format!(
            "  for (int j = 0; j < ((x + {i}) & 3); j++) {{ {body} }}\n"
        ));
    }
    s.push_str("  out[gid] = acc;\n}\n");
    s
}

/// What [`source`]'s kernel computes for work-item `gid`.
fn host(loops: usize, input: &[u32], ix: &[i32], gid: usize) -> u32 {
    let x = ix[gid];
    let mut acc = input[gid & 63];
    for i in 0..loops {
        for j in 0..((x + i as i32) & 3) as usize {
            match (i % 7, i % 5) {
                (0, _) => {
                    for k in 0..(j & 1) + 1 {
                        acc = acc
                            .wrapping_mul(3)
                            .wrapping_add(input[(gid + j + k + i) & 63]);
                    }
                }
                (_, 0) => {
                    let p: Vec<u32> = (0..4).map(|q| input[(gid + q + i) & 63]).collect();
                    acc = acc
                        .wrapping_mul(5)
                        .wrapping_add(p[((x + j as i32) & 3) as usize]);
                }
                _ => {
                    acc = acc
                        .wrapping_mul(3 + 2 * (i % 4) as u32)
                        .wrapping_add(input[(gid + j + i) & 63]);
                }
            }
        }
    }
    acc
}

/// `build_scale`'s `arrays` shape: `n` private arrays, each filled by a loop of 4
/// iterations in every work-item, then updated and read at per-item indices.
fn arrays_source(n: usize) -> String {
    let mut s = String::from(
        "kernel void k(global const uint *input, global const int *ix, global uint *out)\n{\n  \
         size_t gid = get_global_id(0);\n  int x = ix[gid];\n  uint acc = input[gid & 63];\n",
    );
    for i in 0..n {
        s.push_str(&format!(
            "  {{ uint p[4]; for (int j = 0; j < 4; j++) p[j] = input[(gid + j + {i}) & 63]; \
             p[(x + {i}) & 3] += acc; acc = acc * 3u + p[(x + {}) & 3]; }}\n",
            i + 1
        ));
    }
    s.push_str("  out[gid] = acc;\n}\n");
    s
}

/// What [`arrays_source`]'s kernel computes for work-item `gid`.
fn arrays_host(n: usize, input: &[u32], ix: &[i32], gid: usize) -> u32 {
    let x = ix[gid];
    let mut acc = input[gid & 63];
    for i in 0..n {
        let mut p: Vec<u32> = (0..4).map(|j| input[(gid + j + i) & 63]).collect();
        let a = ((x + i as i32) & 3) as usize;
        p[a] = p[a].wrapping_add(acc);
        acc = acc
            .wrapping_mul(3)
            .wrapping_add(p[((x + i as i32 + 1) & 3) as usize]);
    }
    acc
}

fn check(loops: usize) {
    check_source(
        &source(loops),
        |input, ix, g| host(loops, input, ix, g),
        loops,
    );
}

/// Builds `src`, runs it on `ITEMS` work-items and compares with `host`.
fn check_source(src: &str, host: impl Fn(&[u32], &[i32], usize) -> u32, loops: usize) {
    let ctx = DeviceContext::new();
    let program = ctx.build(src, "");
    let input: Vec<u32> = (0..64u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    let ix: Vec<i32> = (0..ITEMS as i32).map(|i| (i * 37 + 11) % 101).collect();
    let input_buf = ctx.buffer_from(&input);
    let ix_buf = ctx.buffer_from(&ix);
    let out = ctx.buffer_zeroed::<u32>(ITEMS);
    let k = program.kernel("k");
    k.arg_buffer(0, &input_buf)
        .arg_buffer(1, &ix_buf)
        .arg_buffer(2, &out);
    ctx.run(&k, &[ITEMS], Some(&[ITEMS]));
    let expect: Vec<u32> = (0..ITEMS).map(|g| host(&input, &ix, g)).collect();
    assert_eq!(ctx.read::<u32>(&out, ITEMS), expect, "{loops} loops");
}

/// Over the loop count from which the build uses `opt`'s cheaper pipeline.
#[test]
fn many_sequential_loops_compute_right() {
    check(600);
}

/// Under it: clang's -O2, the same results.
#[test]
fn some_sequential_loops_compute_right() {
    check(60);
}

/// The `arrays` shape over the `opt` threshold (a huge kernel: one body at the
/// smallest width) and under it.
#[test]
fn uniform_loops_over_private_arrays_compute_right() {
    for n in [500, 40] {
        check_source(
            &arrays_source(n),
            |input, ix, g| arrays_host(n, input, ix, g),
            n,
        );
    }
}

/// Statement `i` of [`scopes_source`]: scopes that end, restart and overlap in the
/// ways C allows (per-iteration locals with `continue`, a counter read after its loop,
/// a backward `goto`, locals inside `switch` cases, arrays in nested blocks).
fn scope_statement(i: usize) -> String {
    match i % 6 {
        0 => format!(
            "for (int j = 0; j < ((x + {i}) & 3); j++) {{ int t = j * 3 + (int)input[(gid + {i}) & 63]; \
             if (t & 1) continue; acc = acc * 3u + (uint)t; }}"
        ),
        1 => format!(
            "{{ int k = 0; for (; k < ((x + {i}) & 3); k++) acc += input[(gid + k) & 63]; acc = acc * 5u + (uint)k; }}"
        ),
        2 => format!(
            "{{ int r = 0; again{i}: r++; acc = acc * 7u + (uint)r; if (r < ((x + {i}) & 3)) goto again{i}; }}"
        ),
        3 => format!(
            "switch ((x + {i}) & 3) {{ case 0: {{ int q = {i}; acc += (uint)q; }} break; \
             case 1: {{ int q = (int)input[{i} & 63]; for (int j = 0; j < 2; j++) q += j; acc ^= (uint)q; }} break; \
             default: {{ uint p[2]; p[0] = acc; p[1] = {i}u; acc = p[(x + {i}) & 1] * 3u + 1u; }} }}"
        ),
        4 => format!(
            "{{ uint p[4]; for (int j = 0; j < 4; j++) p[j] = input[(gid + j + {i}) & 63]; \
             {{ uint p2[4]; for (int j = 0; j < 4; j++) p2[j] = p[3 - j] + (uint)j; acc = acc * 3u + p2[(x + {i}) & 3]; }} }}"
        ),
        _ => format!(
            "for (int j = 0; j < ((x + {i}) & 1) + 1; j++) for (int m = j; m < 2; m++) acc = acc * 3u + (uint)(j * 2 + m);"
        ),
    }
}

/// A kernel of `n` [`scope_statement`]s.
fn scopes_source(n: usize) -> String {
    let mut s = String::from(
        "kernel void k(global const uint *input, global const int *ix, global uint *out)\n{\n  \
         size_t gid = get_global_id(0);\n  int x = ix[gid];\n  uint acc = input[gid & 63];\n",
    );
    for i in 0..n {
        s.push_str(&format!("  {}\n", scope_statement(i)));
    }
    s.push_str("  out[gid] = acc;\n}\n");
    s
}

/// What [`scopes_source`]'s kernel computes for work-item `gid`.
fn scopes_host(n: usize, input: &[u32], ix: &[i32], gid: usize) -> u32 {
    let x = ix[gid];
    let mut acc = input[gid & 63];
    let sel = |i: usize, m: i32| ((x + i as i32) & m) as usize;
    for i in 0..n {
        match i % 6 {
            0 => {
                for j in 0..sel(i, 3) {
                    let t = (j * 3) as i32 + input[(gid + i) & 63] as i32;
                    if t & 1 == 0 {
                        acc = acc.wrapping_mul(3).wrapping_add(t as u32);
                    }
                }
            }
            1 => {
                let mut k = 0;
                while k < sel(i, 3) {
                    acc = acc.wrapping_add(input[(gid + k) & 63]);
                    k += 1;
                }
                acc = acc.wrapping_mul(5).wrapping_add(k as u32);
            }
            2 => {
                let mut r = 0u32;
                loop {
                    r += 1;
                    acc = acc.wrapping_mul(7).wrapping_add(r);
                    if r as usize >= sel(i, 3) {
                        break;
                    }
                }
            }
            3 => match sel(i, 3) {
                0 => acc = acc.wrapping_add(i as u32),
                1 => acc ^= (input[i & 63] as i32 + 1) as u32,
                _ => {
                    let p = [acc, i as u32];
                    acc = p[sel(i, 1)].wrapping_mul(3).wrapping_add(1);
                }
            },
            4 => {
                let p: Vec<u32> = (0..4).map(|j| input[(gid + j + i) & 63]).collect();
                let p2: Vec<u32> = (0..4).map(|j| p[3 - j].wrapping_add(j as u32)).collect();
                acc = acc.wrapping_mul(3).wrapping_add(p2[sel(i, 3)]);
            }
            _ => {
                for j in 0..sel(i, 1) + 1 {
                    for m in j..2 {
                        acc = acc.wrapping_mul(3).wrapping_add((j * 2 + m) as u32);
                    }
                }
            }
        }
    }
    acc
}

/// Scopes of every kind, over the `opt` threshold (locals sharing slots) and under it.
#[test]
fn locals_of_every_scope_kind_compute_right() {
    for n in [700, 36] {
        check_source(
            &scopes_source(n),
            |input, ix, g| scopes_host(n, input, ix, g),
            n,
        );
    }
}

/// `n` ifs on the work-item's `x`, nested 50 deep: over 1000 conditional branches the
/// build takes the light pipeline too, without any loop.
fn branches_source(n: usize) -> String {
    let mut s = String::from(
        "kernel void k(global const uint *input, global const int *ix, global uint *out)\n{\n  \
         size_t gid = get_global_id(0);\n  int x = ix[gid];\n  uint acc = input[gid & 63];\n",
    );
    for chunk in 0..n.div_ceil(50) {
        let depth = (n - chunk * 50).min(50);
        for d in 0..depth {
            s.push_str(&format!(
                "  if (((x >> ({d} & 7)) & 1) | (x > {})) {{ acc = acc * 3u + input[(gid + {d}) & 63];\n",
                d * 2 + chunk
            ));
        }
        s.push_str(&"}".repeat(depth));
        s.push('\n');
    }
    s.push_str("  out[gid] = acc;\n}\n");
    s
}

/// What [`branches_source`]'s kernel computes for work-item `gid`.
fn branches_host(n: usize, input: &[u32], ix: &[i32], gid: usize) -> u32 {
    let x = ix[gid];
    let mut acc = input[gid & 63];
    for chunk in 0..n.div_ceil(50) {
        let depth = (n - chunk * 50).min(50);
        for d in 0..depth {
            if (x >> (d & 7)) & 1 == 0 && x <= (d * 2 + chunk) as i32 {
                break;
            }
            acc = acc.wrapping_mul(3).wrapping_add(input[(gid + d) & 63]);
        }
    }
    acc
}

/// Over the branch counts from which the build uses `opt`'s cheaper pipeline (1000)
/// and its minimal one without InstCombine and GVN (2000), and under both.
#[test]
fn many_nested_branches_compute_right() {
    for n in [2100, 1200, 90] {
        check_source(
            &branches_source(n),
            |input, ix, g| branches_host(n, input, ix, g),
            n,
        );
    }
}
