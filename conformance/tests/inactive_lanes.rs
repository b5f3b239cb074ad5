//! Work-items that a condition switched off never touch memory, and values that an
//! index computation wraps are still right. cranecl runs a sub-group's work-items as
//! SIMD lanes, so an `if` is executed for every lane under a mask: a load, store,
//! atomic or built-in that ran for an inactive lane would read or write wherever that
//! lane's (guarded-off) index points. Every buffer here sits between inaccessible
//! pages (`guarded`), and the guarded-off indices point just before or after it (or
//! gigabytes away), so one stray access kills the test process.
//!
//! Each kernel runs at every sub-group width the device offers through
//! `intel_reqd_sub_group_size` (one plain build elsewhere), with whole and ragged
//! sub-groups.

#![allow(clippy::needless_range_loop)] // item indices index several parallel tables

use cranecl_conformance::guarded::{Fence, GuardedMemory};
use cranecl_conformance::*;

/// The sub-group widths to build each kernel for (attribute text, label).
fn widths(ctx: &DeviceContext) -> Vec<(String, String)> {
    if ctx.has_extension("cl_intel_required_subgroup_size") {
        ctx.sub_group_sizes()
            .into_iter()
            .map(|w| {
                (
                    format!("__attribute__((intel_reqd_sub_group_size({w})))"),
                    format!("width {w}"),
                )
            })
            .collect()
    } else {
        vec![(String::new(), "default width".to_string())]
    }
}

/// Builds `src` (which uses `ATTR` before each kernel) for every width, as OpenCL C
/// 3.0 (non-uniform work-groups allowed).
fn kernels(ctx: &DeviceContext, src: &str, name: &str) -> Vec<(Kernel, String)> {
    widths(ctx)
        .into_iter()
        .map(|(attr, label)| {
            let full = format!("#define ATTR {attr}\n{src}");
            (ctx.kernel(&full, "-cl-std=CL3.0", name), label)
        })
        .collect()
}

const N: usize = 1024; // one 4 KiB page of u32: both fences sit on page edges

/// Indices for `n` work-items: `i % 3 == 0` gets a guarded-off index (alternately just
/// before the buffer and a gigabyte before it), the rest a valid index.
fn mixed_indices(n: usize) -> Vec<i32> {
    (0..n)
        .map(|i| match i % 6 {
            0 => -1,
            3 => -(1 << 28) - i as i32,
            _ => ((i * 7) % N) as i32,
        })
        .collect()
}

#[test]
fn guarded_load_through_a_function() {
    let ctx = DeviceContext::new();
    let src = r#"
uint f(global uint *b, int x) { if (x < 0) return 0u; return b[x]; }
ATTR kernel void k(global uint *b, global const int *xs, global uint *out) {
    size_t i = get_global_id(0);
    out[i] = f(b, xs[i]);
}
"#;
    let data: Vec<u32> = (0..N as u32).map(|i| i * 3 + 1).collect();
    for fence in [Fence::Start, Fence::End] {
        let mem = GuardedMemory::from_slice(&data, fence);
        // SAFETY: mem outlives every command (finished below).
        let b = unsafe { ctx.buffer_on(&mem) };
        for (k, label) in kernels(&ctx, src, "k") {
            for n in [N, 1000, 37] {
                let xs = mixed_indices(n);
                let x = ctx.buffer_from(&xs);
                let out = ctx.buffer_zeroed::<u32>(n);
                k.arg_buffer(0, &b).arg_buffer(1, &x).arg_buffer(2, &out);
                ctx.run(&k, &[n], None);
                let got: Vec<u32> = ctx.read(&out, n);
                for i in 0..n {
                    let want = if xs[i] < 0 { 0 } else { data[xs[i] as usize] };
                    assert_eq!(got[i], want, "{label}, n {n}, item {i}, x {}", xs[i]);
                }
            }
        }
    }
}

#[test]
fn guarded_store() {
    let ctx = DeviceContext::new();
    let src = r#"
ATTR kernel void k(global uint *b, global const int *xs) {
    int i = get_global_id(0);
    int x = xs[i];
    if (x >= 0) b[x] = (uint)i + 1u;
}
"#;
    for fence in [Fence::Start, Fence::End] {
        for (k, label) in kernels(&ctx, src, "k") {
            let mem = GuardedMemory::new(N * 4, fence);
            // SAFETY: mem outlives every command (finished below).
            let b = unsafe { ctx.buffer_on(&mem) };
            // Distinct valid targets so the result does not depend on store order.
            let xs: Vec<i32> = (0..N)
                .map(|i| match i % 6 {
                    0 => -1,
                    3 => i32::MIN + i as i32,
                    _ => i as i32,
                })
                .collect();
            let x = ctx.buffer_from(&xs);
            k.arg_buffer(0, &b).arg_buffer(1, &x);
            ctx.run(&k, &[N], None);
            let got: Vec<u32> = ctx.read(&b, N);
            for i in 0..N {
                let want = if xs[i] >= 0 { i as u32 + 1 } else { 0 };
                assert_eq!(got[i], want, "{label}, element {i}");
            }
        }
    }
}

/// Work-items for `x = i - off` to cover `0..limit` exactly (none active for huge
/// offsets: then 64 items, all switched off).
fn items_for(off: i32, limit: usize) -> usize {
    if off > 4096 {
        64
    } else {
        (limit as i64 + i64::from(off)) as usize
    }
}

/// `x = i - off` (affine in the work-item id): clang zero-extends x where it knows
/// `x >= 0`, so the lanes before the wrap must neither be accessed nor shift the
/// others' addresses.
#[test]
fn guarded_affine_index_crossing_zero() {
    let ctx = DeviceContext::new();
    let src = r#"
uint f(global uint *b, int x) { if (x < 0) return 0u; return b[x]; }
ATTR kernel void ld(global uint *b, global uint *out, int off) {
    int i = get_global_id(0);
    out[i] = f(b, i - off);
}
ATTR kernel void ld_scaled(global uint *b, global uint *out, int off) {
    int i = get_global_id(0);
    out[i] = f(b, (i - off) * 5);
}
ATTR kernel void st(global uint *b, int off) {
    int i = get_global_id(0);
    int x = i - off;
    if (x >= 0) b[x] = (uint)i;
}
ATTR kernel void ld4(global uint4 *b, global uint4 *out, int off) {
    int i = get_global_id(0);
    int x = i - off;
    uint4 r = (uint4)(0);
    if (x >= 0) r = b[x];
    out[i] = r;
}
ATTR kernel void st4(global float4 *b, int off) {
    int i = get_global_id(0);
    int x = i - off;
    if (x >= 0) b[x] = (float4)(i, i + 1, i + 2, i + 3);
}
ATTR kernel void ld2(global float2 *b, global float2 *out, int off) {
    int i = get_global_id(0);
    int x = i - off;
    float2 r = (float2)(0.0f);
    if (x >= 0) r = b[x];
    out[i] = r;
}
"#;
    let data: Vec<u32> = (0..N as u32).map(|i| i ^ 0x5a5a).collect();
    let offsets = [3, 9, 13, 1000, -5, 1 << 30];
    // Scalar loads: out[i] = x < 0 ? 0 : b[x * scale] (elements are u32).
    for (name, scale) in [("ld", 1usize), ("ld_scaled", 5)] {
        let mem = GuardedMemory::from_slice(&data, Fence::End);
        // SAFETY: mem outlives every command (each run finishes).
        let b = unsafe { ctx.buffer_on(&mem) };
        for (k, label) in kernels(&ctx, src, name) {
            for off in offsets {
                let n = items_for(off, N.div_ceil(scale));
                let out = ctx.buffer_zeroed::<u32>(n);
                k.arg_buffer(0, &b).arg_buffer(1, &out).arg(2, off);
                ctx.run(&k, &[n], None);
                let got: Vec<u32> = ctx.read(&out, n);
                for i in 0..n {
                    let x = i as i64 - i64::from(off);
                    let want = if x < 0 { 0 } else { data[x as usize * scale] };
                    assert_eq!(got[i], want, "{name} {label}, off {off}, item {i}");
                }
            }
        }
    }
    // Per element size (bytes per work-item): the stores and vector loads.
    for (name, elem_words) in [("st", 1usize), ("ld4", 4), ("st4", 4), ("ld2", 2)] {
        for (k, label) in kernels(&ctx, src, name) {
            for off in offsets {
                let count = N / elem_words;
                let n = items_for(off, count);
                let x_of = |i: usize| i as i64 - i64::from(off);
                let mut mem = GuardedMemory::new(N * 4, Fence::End);
                if name.starts_with("ld") {
                    mem.bytes_mut().copy_from_slice(as_bytes(&data));
                }
                // SAFETY: mem outlives every command (each run finishes).
                let b = unsafe { ctx.buffer_on(&mem) };
                let out = ctx.buffer_zeroed::<u32>(n * elem_words);
                k.arg_buffer(0, &b);
                if name.starts_with("ld") {
                    k.arg_buffer(1, &out).arg(2, off);
                } else {
                    k.arg(1, off);
                }
                ctx.run(&k, &[n], None);
                if name.starts_with("ld") {
                    let got: Vec<u32> = ctx.read(&out, n * elem_words);
                    for i in 0..n {
                        for c in 0..elem_words {
                            let x = x_of(i);
                            let want = if x < 0 {
                                0
                            } else {
                                data[x as usize * elem_words + c]
                            };
                            assert_eq!(
                                got[i * elem_words + c],
                                want,
                                "{name} {label}, off {off}, item {i}.{c}"
                            );
                        }
                    }
                } else {
                    let got: Vec<u32> = ctx.read(&b, N);
                    for x in 0..count {
                        let i = x as i64 + i64::from(off);
                        let ran = i >= 0 && (i as usize) < n;
                        for c in 0..elem_words {
                            let want = match (ran, elem_words) {
                                (false, _) => 0,
                                (true, 1) => i as u32,
                                (true, _) => ((i + c as i64) as f32).to_bits(),
                            };
                            assert_eq!(
                                got[x * elem_words + c],
                                want,
                                "{name} {label}, off {off}, element {x}.{c}"
                            );
                        }
                    }
                }
            }
        }
    }
}

/// Private arrays indexed by a guarded index, built-ins that read or write memory
/// (vloadn/vstoren, vload_half/vstore_half) and atomics, all behind per-item guards.
#[test]
fn guarded_private_builtin_and_atomic_accesses() {
    let ctx = DeviceContext::new();
    let src = r#"
ATTR kernel void priv(global const int *xs, global int *out) {
    int i = get_global_id(0);
    int x = xs[i];
    int a[4];
    for (int k = 0; k < 4; k++) a[k] = k * 10 + i;
    int r = -1;
    if (x >= 0 && x < 4) r = a[x];
    if (x >= 0 && x < 4) a[x] = 1000;
    out[i] = r + a[0] + a[1] + a[2] + a[3];
}
ATTR kernel void vl(global const uint *b, global const int *xs, global uint *out) {
    int i = get_global_id(0);
    int x = xs[i];
    uint4 r = (uint4)(7);
    if (x >= 0) r = vload4(x / 4, b);
    vstore4(r, i, out);
}
ATTR kernel void vs(global uint *b, global const int *xs) {
    int i = get_global_id(0);
    int x = xs[i];
    if (x >= 0) vstore2((uint2)(i, i + 1), x / 2, b);
}
ATTR kernel void hl(global const half *b, global const int *xs, global float *out) {
    int i = get_global_id(0);
    int x = xs[i];
    float r = -1.0f;
    if (x >= 0) r = vload_half(x * 2, b);
    out[i] = r;
}
ATTR kernel void hs(global half *b, global const int *xs) {
    int i = get_global_id(0);
    int x = xs[i];
    if (x >= 0) vstore_half((float)i, x * 2, b);
}
ATTR kernel void at(global int *b, global const int *xs, global int *out) {
    int i = get_global_id(0);
    int x = xs[i];
    int r = -1;
    if (x >= 0) r = atomic_add(&b[x], 1);
    out[i] = r >= 0 ? 1 : 0;
}
"#;
    let n = N;
    let xs = mixed_indices(n);
    let x = ctx.buffer_from(&xs);
    let valid = |i: usize| xs[i] >= 0;
    for (k, label) in kernels(&ctx, src, "priv") {
        // Private indices: 0..3 valid, the rest huge or negative.
        let pxs: Vec<i32> = (0..n as i32)
            .map(|i| {
                if i % 3 == 0 {
                    i % 4
                } else {
                    (i - 500) * 100_000
                }
            })
            .collect();
        let px = ctx.buffer_from(&pxs);
        let out = ctx.buffer_zeroed::<i32>(n);
        k.arg_buffer(0, &px).arg_buffer(1, &out);
        ctx.run(&k, &[n], None);
        let got: Vec<i32> = ctx.read(&out, n);
        for i in 0..n {
            let mut a: Vec<i32> = (0..4).map(|k| k * 10 + i as i32).collect();
            let p = pxs[i];
            let mut r = -1;
            if (0..4).contains(&p) {
                r = a[p as usize];
                a[p as usize] = 1000;
            }
            assert_eq!(got[i], r + a.iter().sum::<i32>(), "priv {label}, item {i}");
        }
    }
    let data: Vec<u32> = (0..N as u32).map(|i| i * 11).collect();
    for fence in [Fence::Start, Fence::End] {
        for (k, label) in kernels(&ctx, src, "vl") {
            let mem = GuardedMemory::from_slice(&data, fence);
            // SAFETY: mem outlives every command (each run finishes).
            let b = unsafe { ctx.buffer_on(&mem) };
            let out = ctx.buffer_zeroed::<u32>(4 * n);
            k.arg_buffer(0, &b).arg_buffer(1, &x).arg_buffer(2, &out);
            ctx.run(&k, &[n], None);
            let got: Vec<u32> = ctx.read(&out, 4 * n);
            for i in 0..n {
                for c in 0..4 {
                    let want = if valid(i) {
                        data[(xs[i] as usize / 4) * 4 + c]
                    } else {
                        7
                    };
                    assert_eq!(got[4 * i + c], want, "vload4 {label}, item {i}.{c}");
                }
            }
        }
        for (k, label) in kernels(&ctx, src, "vs") {
            let mem = GuardedMemory::new(N * 4, fence);
            // SAFETY: mem outlives every command (each run finishes).
            let b = unsafe { ctx.buffer_on(&mem) };
            // One writer per pair: indices 2*i' for distinct i'.
            let sxs: Vec<i32> = (0..n)
                .map(|i| {
                    if i % 3 == 0 {
                        -(i as i32) - 1
                    } else if i < N / 2 {
                        2 * i as i32
                    } else {
                        -(1 << 29)
                    }
                })
                .collect();
            let sx = ctx.buffer_from(&sxs);
            k.arg_buffer(0, &b).arg_buffer(1, &sx);
            ctx.run(&k, &[n], None);
            let got: Vec<u32> = ctx.read(&b, N);
            let mut want = vec![0u32; N];
            for (i, &p) in sxs.iter().enumerate() {
                if p >= 0 {
                    want[p as usize] = i as u32;
                    want[p as usize + 1] = i as u32 + 1;
                }
            }
            assert_eq!(got, want, "vstore2 {label}");
        }
        // Halves: element 2x of b holds x as a half.
        let halves: Vec<u16> = (0..N)
            .map(|e| {
                if e % 2 == 0 {
                    f32_to_half((e / 2) as f32)
                } else {
                    0
                }
            })
            .collect();
        let hxs: Vec<i32> = (0..n)
            .map(|i| {
                if i % 3 == 0 {
                    -(1 << 28)
                } else if i % 3 == 1 {
                    -1
                } else {
                    (i / 2) as i32
                }
            })
            .collect();
        let hx = ctx.buffer_from(&hxs);
        if ctx.has_extension("cl_khr_fp16") || testing_cranecl() {
            for (k, label) in kernels(&ctx, src, "hl") {
                let mem = GuardedMemory::from_slice(&halves, fence);
                // SAFETY: mem outlives every command (each run finishes).
                let b = unsafe { ctx.buffer_on(&mem) };
                let out = ctx.buffer_zeroed::<f32>(n);
                k.arg_buffer(0, &b).arg_buffer(1, &hx).arg_buffer(2, &out);
                ctx.run(&k, &[n], None);
                let got: Vec<f32> = ctx.read(&out, n);
                for i in 0..n {
                    let want = if hxs[i] >= 0 { hxs[i] as f32 } else { -1.0 };
                    assert_eq!(got[i], want, "vload_half {label}, item {i}");
                }
            }
            for (k, label) in kernels(&ctx, src, "hs") {
                let mem = GuardedMemory::new(N * 2, fence);
                // SAFETY: mem outlives every command (each run finishes).
                let b = unsafe { ctx.buffer_on(&mem) };
                // Distinct targets: item i (i % 3 == 2) writes element 2 * (i / 2).
                let sx: Vec<i32> = (0..n)
                    .map(|i| {
                        if i % 3 == 2 && i < N / 2 {
                            (i / 2) as i32
                        } else {
                            -(i as i32) - 1
                        }
                    })
                    .collect();
                let sxb = ctx.buffer_from(&sx);
                k.arg_buffer(0, &b).arg_buffer(1, &sxb);
                ctx.run(&k, &[n], None);
                let got: Vec<u16> = ctx.read(&b, N);
                let mut want = vec![0u16; N];
                for (i, &p) in sx.iter().enumerate() {
                    if p >= 0 {
                        want[2 * p as usize] = f32_to_half(i as f32);
                    }
                }
                assert_eq!(got, want, "vstore_half {label}");
            }
        }
        for (k, label) in kernels(&ctx, src, "at") {
            let mem = GuardedMemory::new(N * 4, fence);
            // SAFETY: mem outlives every command (each run finishes).
            let b = unsafe { ctx.buffer_on(&mem) };
            let out = ctx.buffer_zeroed::<i32>(n);
            k.arg_buffer(0, &b).arg_buffer(1, &x).arg_buffer(2, &out);
            ctx.run(&k, &[n], None);
            let got: Vec<i32> = ctx.read(&b, N);
            let mut want = vec![0i32; N];
            for &p in &xs {
                if p >= 0 {
                    want[p as usize] += 1;
                }
            }
            assert_eq!(got, want, "atomic_add {label}");
            let flags: Vec<i32> = ctx.read(&out, n);
            for i in 0..n {
                assert_eq!(
                    flags[i],
                    i32::from(valid(i)),
                    "atomic_add {label}, item {i}"
                );
            }
        }
    }
}

/// Round-to-nearest-even float -> half for the small integers used here.
fn f32_to_half(x: f32) -> u16 {
    let b = x.to_bits();
    if x == 0.0 {
        return 0;
    }
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    let mant = (b >> 13) & 0x3ff;
    assert!(
        (1..31).contains(&exp) && b & 0x1fff == 0,
        "{x} is not exact in half"
    );
    ((exp as u32) << 10 | mant) as u16
}

/// Loops that work-items leave at different iterations, and switch cases: the
/// accesses of later iterations must not run for items that already left, even where
/// their next index would be past the end of the buffer.
#[test]
fn loops_and_switches_leave_items_behind() {
    let ctx = DeviceContext::new();
    let src = r#"
ATTR kernel void sum(global const uint *b, global const int *start, global const int *cnt,
                     global uint *out) {
    int i = get_global_id(0);
    uint s = 0;
    for (int k = 0; k < cnt[i]; k++) s += b[start[i] + k];
    out[i] = s;
}
ATTR kernel void walk(global const uint *b, global const int *start, global uint *out) {
    // Pointer walk until a zero: each item stops at its own zero.
    int i = get_global_id(0);
    global const uint *p = b + start[i];
    uint s = 0;
    while (*p != 0) { s += *p; p++; }
    out[i] = s;
}
ATTR kernel void sw(global const uint *b, global const int *xs, global uint *out) {
    int i = get_global_id(0);
    int x = xs[i];
    uint r;
    switch (i % 4) {
    case 0: r = x >= 0 ? b[x] : 1u; break;
    case 1: if (x >= 0) { r = b[x] * 2u; } else { r = 2u; } break;
    case 2: r = 3u; break;
    default: r = x < 0 ? 4u : b[x] + 1u; break;
    }
    out[i] = r;
}
"#;
    let data: Vec<u32> = (0..N as u32)
        .map(|i| if i % 97 == 96 { 0 } else { i + 1 })
        .collect();
    let mut data_end = data.clone();
    // The last run of walk ends at the buffer's last element.
    *data_end.last_mut().expect("non-empty") = 0;
    for n in [N, 777] {
        // Item i sums cnt elements from start, ending exactly at the buffer end for
        // every fourth item.
        let start: Vec<i32> = (0..n)
            .map(|i| {
                if i % 4 == 0 {
                    (N - (i % 13)) as i32
                } else {
                    (i % 500) as i32
                }
            })
            .collect();
        let cnt: Vec<i32> = (0..n)
            .map(|i| {
                if i % 4 == 0 {
                    (i % 13) as i32
                } else {
                    (i % 29) as i32
                }
            })
            .collect();
        let (sb, cb) = (ctx.buffer_from(&start), ctx.buffer_from(&cnt));
        let mem = GuardedMemory::from_slice(&data, Fence::End);
        // SAFETY: mem outlives every command (each run finishes).
        let b = unsafe { ctx.buffer_on(&mem) };
        for (k, label) in kernels(&ctx, src, "sum") {
            let out = ctx.buffer_zeroed::<u32>(n);
            k.arg_buffer(0, &b)
                .arg_buffer(1, &sb)
                .arg_buffer(2, &cb)
                .arg_buffer(3, &out);
            ctx.run(&k, &[n], None);
            let got: Vec<u32> = ctx.read(&out, n);
            for i in 0..n {
                let s0 = start[i] as usize;
                let want: u32 = data[s0..s0 + cnt[i] as usize]
                    .iter()
                    .copied()
                    .fold(0u32, u32::wrapping_add);
                assert_eq!(got[i], want, "sum {label}, n {n}, item {i}");
            }
        }
        let wmem = GuardedMemory::from_slice(&data_end, Fence::End);
        // SAFETY: wmem outlives every command (each run finishes).
        let wb = unsafe { ctx.buffer_on(&wmem) };
        let wstart: Vec<i32> = (0..n).map(|i| ((i * 37) % N) as i32).collect();
        let wsb = ctx.buffer_from(&wstart);
        for (k, label) in kernels(&ctx, src, "walk") {
            let out = ctx.buffer_zeroed::<u32>(n);
            k.arg_buffer(0, &wb).arg_buffer(1, &wsb).arg_buffer(2, &out);
            ctx.run(&k, &[n], None);
            let got: Vec<u32> = ctx.read(&out, n);
            for i in 0..n {
                let want: u32 = data_end[wstart[i] as usize..]
                    .iter()
                    .take_while(|v| **v != 0)
                    .sum();
                assert_eq!(got[i], want, "walk {label}, n {n}, item {i}");
            }
        }
        let xs = mixed_indices(n);
        let xb = ctx.buffer_from(&xs);
        for (k, label) in kernels(&ctx, src, "sw") {
            let out = ctx.buffer_zeroed::<u32>(n);
            k.arg_buffer(0, &b).arg_buffer(1, &xb).arg_buffer(2, &out);
            ctx.run(&k, &[n], None);
            let got: Vec<u32> = ctx.read(&out, n);
            for i in 0..n {
                let x = xs[i];
                let v = |f: fn(u32) -> u32, d: u32| if x >= 0 { f(data[x as usize]) } else { d };
                let want = match i % 4 {
                    0 => v(|y| y, 1),
                    1 => v(|y| y.wrapping_mul(2), 2),
                    2 => 3,
                    _ => v(|y| y + 1, 4),
                };
                assert_eq!(got[i], want, "switch {label}, n {n}, item {i}");
            }
        }
    }
}

/// Ragged work-groups and sub-groups: an unguarded `b[gid]` whose buffer ends exactly
/// at the last work-item; the padding lanes of the last sub-group must not read or
/// write past it. Also in 2D, with the row index computed in int.
#[test]
fn ragged_groups_touch_only_their_items() {
    let ctx = DeviceContext::new();
    let src = r#"
ATTR kernel void copy1(global const uint *a, global uint *b) {
    int i = get_global_id(0);
    b[i] = a[i] + 1u;
}
ATTR kernel void copy2(global const uint *a, global uint *b, int w) {
    int x = get_global_id(0), y = get_global_id(1);
    b[y * w + x] = a[y * w + x] * 3u;
}
"#;
    for (n, local) in [
        (1021usize, Some(16usize)),
        (1000, Some(13)),
        (999, None),
        (5, Some(5)),
    ] {
        let a: Vec<u32> = (0..n as u32).collect();
        let am = GuardedMemory::from_slice(&a, Fence::End);
        let bm = GuardedMemory::new(n * 4, Fence::End);
        // SAFETY: am and bm outlive every command (each run finishes).
        let (ab, bb) = unsafe { (ctx.buffer_on(&am), ctx.buffer_on(&bm)) };
        for (k, label) in kernels(&ctx, src, "copy1") {
            k.arg_buffer(0, &ab).arg_buffer(1, &bb);
            let l = local.map(|l| vec![l]);
            ctx.run(&k, &[n], l.as_deref());
            let got: Vec<u32> = ctx.read(&bb, n);
            for i in 0..n {
                assert_eq!(got[i], a[i] + 1, "copy1 {label}, n {n}, item {i}");
            }
        }
    }
    let (w, h) = (37usize, 11usize);
    let a: Vec<u32> = (0..(w * h) as u32).collect();
    let am = GuardedMemory::from_slice(&a, Fence::End);
    let bm = GuardedMemory::new(w * h * 4, Fence::End);
    // SAFETY: am and bm outlive every command (each run finishes).
    let (ab, bb) = unsafe { (ctx.buffer_on(&am), ctx.buffer_on(&bm)) };
    for (k, label) in kernels(&ctx, src, "copy2") {
        for local in [None, Some([8usize, 3]), Some([37, 1]), Some([5, 5])] {
            k.arg_buffer(0, &ab).arg_buffer(1, &bb).arg(2, w as i32);
            ctx.run(&k, &[w, h], local.as_ref().map(|l| &l[..]));
            let got: Vec<u32> = ctx.read(&bb, w * h);
            for i in 0..w * h {
                assert_eq!(
                    got[i],
                    a[i] * 3,
                    "copy2 {label}, local {local:?}, element {i}"
                );
            }
        }
    }
}

/// Width changes and right shifts of values that wrap across a sub-group: results
/// must be those of each work-item on its own (the affine shortcut may not apply).
#[test]
fn wrapping_values_widen_per_item() {
    let ctx = DeviceContext::new();
    let src = r#"
ATTR kernel void k(global ulong *out, uint off) {
    uint i = get_global_id(0);
    uint u = i - off;                      /* wraps below zero */
    int h = (int)(i * 0x9E3779B9u);        /* wraps all the time */
    size_t o = 6 * i;
    out[o + 0] = (ulong)u;                 /* zero extension */
    out[o + 1] = (ulong)(long)h;           /* sign extension */
    out[o + 2] = (ulong)(u >> 3);          /* logical shift */
    out[o + 3] = (ulong)(h >> 5);          /* arithmetic shift */
    out[o + 4] = ((ulong)(long)(int)u) & 0xffffffffUL;  /* mask */
    out[o + 5] = (ulong)(ushort)(i * 4099u);
}
"#;
    for off in [0u32, 3, 5, 1 << 31, u32::MAX] {
        for (k, label) in kernels(&ctx, src, "k") {
            let n = 256;
            let out = ctx.buffer_zeroed::<u64>(6 * n);
            k.arg_buffer(0, &out).arg(1, off);
            ctx.run(&k, &[n], None);
            let got: Vec<u64> = ctx.read(&out, 6 * n);
            for i in 0..n as u32 {
                let u = i.wrapping_sub(off);
                let h = i.wrapping_mul(0x9E37_79B9) as i32;
                let want = [
                    u64::from(u),
                    i64::from(h) as u64,
                    u64::from(u >> 3),
                    i64::from(h >> 5) as u64,
                    u64::from(u),
                    u64::from(i.wrapping_mul(4099) as u16),
                ];
                let o = 6 * i as usize;
                assert_eq!(&got[o..o + 6], &want, "{label}, off {off:#x}, item {i}");
            }
        }
    }
}
