//! Loads and stores of small vectors (`uchar4`, `short2`, `float4`, `long2`, ...)
//! at `p[i]`, with `i` consecutive across work-items as an affine index
//! (`get_global_id`) or a varying one (a `uint` grid-stride loop variable), permuted,
//! or guarded per work-item, in full and partial sub-groups; each case checked byte
//! for byte against the host. And a `uchar4` histogram in `__local` memory, whose
//! bytes feed local atomics lane by lane (the jit reads those lanes back as the
//! scalars it loaded, `lower/lane_scalars.rs`), against a host count.

use cranecl_conformance::*;

/// OpenCL C vector types and their sizes in bytes (a 3-component vector's fourth
/// component is padding, whose value a store leaves unspecified).
const TYPES: &[(&str, usize)] = &[
    ("uchar2", 2),
    ("uchar4", 4),
    ("uchar8", 8),
    ("char16", 16),
    ("uchar3", 4),
    ("short2", 4),
    ("ushort4", 8),
    ("short8", 16),
    ("half4", 8),
    ("int2", 8),
    ("uint4", 16),
    ("float2", 8),
    ("float4", 16),
    ("long2", 16),
    ("double2", 16),
];

fn source(ty: &str) -> String {
    format!(
        r#"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void affine(global const {ty} *in, global {ty} *out) {{
    size_t g = get_global_id(0);
    out[g] = in[g];
}}
kernel void strided_loop(global const {ty} *in, global {ty} *out, uint n) {{
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        out[i] = in[i];
}}
kernel void permuted(global const {ty} *in, global {ty} *out, global const uint *perm) {{
    size_t g = get_global_id(0);
    out[g] = in[perm[g]];
}}
kernel void guarded(global const {ty} *in, global {ty} *out, global const uint *perm) {{
    size_t g = get_global_id(0);
    if (perm[g] % 3 != 0)
        out[g] = in[g];
}}
"#
    )
}

/// Deterministic pseudo-random bytes.
fn bytes(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2654435761).wrapping_add(12345);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 11) as u8
        })
        .collect()
}

/// The host's result of copying element `src(g)` of `input` to element `g` of an
/// output that starts as `init`, for each `g` where `src` gives one.
fn host_copy(
    input: &[u8],
    init: &[u8],
    size: usize,
    src: impl Fn(usize) -> Option<usize>,
) -> Vec<u8> {
    let mut out = init.to_vec();
    for g in 0..init.len() / size {
        if let Some(s) = src(g) {
            out[g * size..(g + 1) * size].copy_from_slice(&input[s * size..(s + 1) * size]);
        }
    }
    out
}

#[test]
fn vector_elements_load_and_store_whole_for_every_index_shape() {
    let ctx = DeviceContext::new();
    for (t, &(ty, size)) in TYPES.iter().enumerate() {
        let program = ctx.build(&source(ty), "-cl-std=CL3.0");
        // Full work-groups, and a last partial sub-group (60 of 64 items per group).
        for (items, local) in [(256usize, 64usize), (180, 60)] {
            let input = bytes(items * size, 7 + t as u32);
            let init = bytes(items * size, 99);
            let inb = ctx.buffer_from(&input);
            let perm: Vec<u32> = (0..items as u32)
                .map(|g| (g * 37 + 11) % items as u32)
                .collect();
            let permb = ctx.buffer_from(&perm);
            let run = |name: &str, set: &dyn Fn(&Kernel)| -> Vec<u8> {
                let k = program.kernel(name);
                let out = ctx.buffer_from(&init);
                k.arg_buffer(0, &inb).arg_buffer(1, &out);
                set(&k);
                ctx.run(&k, &[items], Some(&[local]));
                ctx.read::<u8>(&out, items * size)
            };
            let what = format!("{ty}, {items} items in groups of {local}");
            // Compared without the padding bytes of 3-component vectors.
            let padded = ty.ends_with('3');
            let strip = |v: Vec<u8>| -> Vec<u8> {
                v.into_iter()
                    .enumerate()
                    .filter(|(i, _)| !padded || i % size != size - 1)
                    .map(|(_, b)| b)
                    .collect()
            };
            let run = |name: &str, set: &dyn Fn(&Kernel)| strip(run(name, set));
            let host_copy =
                |src: &dyn Fn(usize) -> Option<usize>| strip(host_copy(&input, &init, size, src));
            assert_eq!(run("affine", &|_| {}), host_copy(&Some), "affine: {what}");
            assert_eq!(
                run("strided_loop", &|k| {
                    k.arg(2, items as u32);
                }),
                host_copy(&Some),
                "strided loop: {what}"
            );
            assert_eq!(
                run("permuted", &|k| {
                    k.arg_buffer(2, &permb);
                }),
                host_copy(&|g| Some(perm[g] as usize)),
                "permuted: {what}"
            );
            assert_eq!(
                run("guarded", &|k| {
                    k.arg_buffer(2, &permb);
                }),
                host_copy(&|g| (!perm[g].is_multiple_of(3)).then_some(g)),
                "guarded: {what}"
            );
        }
    }
}

const HISTOGRAM: &str = r#"
kernel void histogram(global const uchar4 *data, uint n4, global uint *hist) {
    local uint lh[256];
    uint lid = get_local_id(0), lsz = get_local_size(0);
    for (uint b = lid; b < 256; b += lsz)
        lh[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = get_global_id(0); i < n4; i += get_global_size(0)) {
        uchar4 v = data[i];
        atomic_inc(&lh[v.x]);
        atomic_inc(&lh[v.y]);
        atomic_inc(&lh[v.z]);
        atomic_inc(&lh[v.w]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint b = lid; b < 256; b += lsz)
        atomic_add(&hist[b], lh[b]);
}
"#;

#[test]
fn a_uchar4_histogram_in_local_memory_counts_every_byte() {
    let ctx = DeviceContext::new();
    let k = ctx.kernel(HISTOGRAM, "", "histogram");
    for (n4, items, local) in [(4096usize, 512usize, 128usize), (1001, 96, 48), (7, 64, 64)] {
        let mut data = bytes(4 * n4, n4 as u32);
        // A few hot bins, as in real images.
        for (i, b) in data.iter_mut().enumerate() {
            if i % 3 == 0 {
                *b = 200 + (i % 5) as u8;
            }
        }
        let db = ctx.buffer_from(&data);
        let hist = ctx.buffer_zeroed::<u32>(256);
        k.arg_buffer(0, &db).arg(1, n4 as u32).arg_buffer(2, &hist);
        ctx.run(&k, &[items], Some(&[local]));
        let mut want = vec![0u32; 256];
        for b in &data {
            want[*b as usize] += 1;
        }
        assert_eq!(
            ctx.read::<u32>(&hist, 256),
            want,
            "n4 = {n4}, {items}/{local}"
        );
    }
}
