//! cl_intel_subgroup_2d_block_io through both of cranecl's paths: the inline one
//! (block inside the surface, all lanes active, a private array) and the run-time
//! helper (edge blocks, some lanes inactive, a private pointer that differs in shape
//! per lane), at sub-group sizes 8, 16 and 32, against a host model of the
//! SPV_INTEL_2d_block_io element-to-lane mapping. Also a sub-group broadcast of a
//! private array element (loaded for the broadcast lane only), with a store between
//! the load and the broadcast, and a shuffle with a per-lane index.
//!
//! A cranecl promise: on cranecl a missing extension fails; elsewhere the tests
//! return early.

use cranecl_conformance::*;

#[path = "common/block2d_model.rs"]
mod model;
use model::*;

/// The surface: bytes per row, rows, bytes from row to row.
const WIDTH: usize = 128;
const HEIGHT: usize = 40;
const PITCH: usize = 192;

/// The functions of the tables, with every row count at sub-group size 16 and a few
/// at the others.
fn functions(kind: Kind, w: usize) -> Vec<Func> {
    let f = |bits, rows, cols, count| Func::new(kind, bits, rows, cols, count);
    let rows: &[usize] = if w == 16 {
        &[1, 2, 4, 8, 16, 32]
    } else {
        &[1, 2, 8, 32]
    };
    let mut v = Vec::new();
    match kind {
        Kind::Read => {
            for &r in rows {
                v.extend([
                    f(8, r, 32, 1),
                    f(8, r, 32, 2),
                    f(16, r, 16, 1),
                    f(16, r, 16, 2),
                ]);
                v.extend([f(32, r, 8, 1), f(32, r, 8, 2), f(32, r, 16, 1)]);
                if r >= 8 {
                    v.push(f(8, r, 16, 4));
                }
            }
        }
        Kind::Transform => {
            v.extend([
                f(8, 32, 16, 1),
                f(8, 32, 16, 2),
                f(16, 16, 16, 1),
                f(16, 32, 16, 2),
            ]);
        }
        Kind::Transpose => v.extend([f(32, 16, 8, 1), f(32, 32, 8, 1)]),
        Kind::Write => {
            for r in [1, 2, 4, 8] {
                v.extend([
                    f(8, r, 16, 1),
                    f(8, r, 32, 1),
                    f(16, r, 16, 1),
                    f(32, r, 16, 1),
                ]);
            }
        }
        // Prefetches are covered by block_io_2d.rs.
        Kind::Prefetch => {}
    }
    v
}

/// Per private byte: Some(Some((row, byte column))), Some(None) = padding, None =
/// undefined.
type ByteSrc = Option<Option<(usize, usize)>>;

/// Per lane, per private byte (all blocks): Some(Some((row, byte column))) for a
/// surface byte, Some(None) for padding (zero), None for an undefined byte.
fn byte_map(f: &Func, w: usize) -> Vec<Vec<ByteSrc>> {
    let e = f.esize();
    let cells = block_cells(f, w);
    cells
        .iter()
        .map(|lane| {
            let mut out = Vec::new();
            for b in 0..f.count {
                for cell in lane {
                    match cell {
                        None => out.extend(std::iter::repeat_n(None, f.lane_elem())),
                        Some(parts) => {
                            for p in parts {
                                for k in 0..e {
                                    out.push(Some(p.map(|(r, c)| (r, (b * f.cols + c) * e + k))));
                                }
                            }
                        }
                    }
                }
            }
            out
        })
        .collect()
}

/// Offset in the surface of byte `cb` of row `r` of a block at element (x, y).
fn inside(f: &Func, x: i64, y: i64, r: usize, cb: usize) -> Option<usize> {
    let row = y + r as i64;
    let col = x * f.esize() as i64 + cb as i64;
    let ok = row >= 0 && (row as usize) < HEIGHT && col >= 0 && (col as usize) < WIDTH;
    ok.then(|| row as usize * PITCH + col as usize)
}

/// Inside (several places), flush with the far corner, across each edge, outside.
fn positions(f: &Func) -> Vec<[i32; 2]> {
    let e = f.esize() as i32;
    let row_elems = WIDTH as i32 / e;
    let total = (f.cols * f.count) as i32;
    let rows = f.rows as i32;
    let h = HEIGHT as i32;
    let step = if e < 4 { 4 / e } else { 1 };
    vec![
        [0, 0],
        [step, 1],
        [row_elems - total, h - rows],
        [2 * step, h - rows - 1],
        [row_elems - total / 2 - step, 2],
        [0, h - rows / 2 - 1],
        [-step, 0],
        [row_elems, 0],
        [0, -1],
    ]
}

fn context(w: usize) -> Option<DeviceContext> {
    let ctx = DeviceContext::new();
    let ok = require(
        ctx.has_extension("cl_intel_subgroup_2d_block_io"),
        "cl_intel_subgroup_2d_block_io",
    );
    (ok && ctx.sub_group_sizes().contains(&w)).then_some(ctx)
}

/// Reads of `kind` at sub-group size `w`: a private array (the inline path when the
/// block is inside and every lane active) and a per-lane choice of two arrays (always
/// the helper), with all lanes active and with the last three inactive.
fn check_reads(kind: Kind, w: usize) {
    let Some(ctx) = context(w) else {
        return;
    };
    let funcs = functions(kind, w);
    let mut src = String::new();
    for f in &funcs {
        let (t, ts) = f.ctype();
        let n = byte_map(f, w)[0].len().div_ceil(ts);
        let name = f.name();
        src += &format!(
            "__attribute__((intel_reqd_sub_group_size({w})))
kernel void k_{name}(global uchar* surf, int width, int height, int pitch,
                     global const int2* coords, global {t}* out, uint active) {{
    int2 c = coords[get_group_id(0)];
    uint l = get_sub_group_local_id();
    {t} d[{n} + 4];
    for (int i = 0; i < {n} + 4; i++) d[i] = ({t})(0xC3C3C3C3u ^ (uint)i);
    if (l < active) {name}((global void*)surf, width, height, pitch, c, d);
    for (int i = 0; i < {n} + 4; i++) out[get_global_id(0) * ({n} + 4) + i] = d[i];
}}
__attribute__((intel_reqd_sub_group_size({w})))
kernel void s_{name}(global uchar* surf, int width, int height, int pitch,
                     global const int2* coords, global {t}* out, uint active) {{
    int2 c = coords[get_group_id(0)];
    uint l = get_sub_group_local_id();
    {t} d0[{n} + 4], d1[{n} + 4];
    for (int i = 0; i < {n} + 4; i++) d0[i] = d1[i] = ({t})(0xC3C3C3C3u ^ (uint)i);
    private {t}* d = (l & 1) ? d1 : d0;
    if (l < active) {name}((global void*)surf, width, height, pitch, c, d);
    for (int i = 0; i < {n} + 4; i++) out[get_global_id(0) * ({n} + 4) + i] = d[i];
}}
"
        );
    }
    let program = ctx.build(&src, "-cl-std=CL3.0");
    let surf = surface_bytes(HEIGHT * PITCH);
    let surf_buf = ctx.buffer_from(&surf);
    for f in &funcs {
        let (_, ts) = f.ctype();
        let map = byte_map(f, w);
        let bytes = map[0].len();
        let per_lane = (bytes.div_ceil(ts) + 4) * ts;
        let pos = positions(f);
        let coords = ctx.buffer_from(&pos);
        for prefix in ["k", "s"] {
            for active in [w, w - 3] {
                let out = ctx.buffer_zeroed::<u8>(pos.len() * w * per_lane);
                let k = program.kernel(&format!("{prefix}_{}", f.name()));
                k.arg_buffer(0, &surf_buf)
                    .arg(1, WIDTH as i32)
                    .arg(2, HEIGHT as i32)
                    .arg(3, PITCH as i32)
                    .arg_buffer(4, &coords)
                    .arg_buffer(5, &out)
                    .arg(6, active as u32);
                ctx.run(&k, &[pos.len() * w], Some(&[w]));
                let got: Vec<u8> = ctx.read(&out, pos.len() * w * per_lane);
                for (g, [x, y]) in pos.iter().enumerate() {
                    for (l, lane_map) in map.iter().enumerate() {
                        let lane = &got[(g * w + l) * per_lane..(g * w + l + 1) * per_lane];
                        let what = format!(
                            "{prefix}_{} w={w} active={active} at ({x}, {y}) lane {l}",
                            f.name()
                        );
                        for (i, m) in lane_map.iter().enumerate() {
                            let guard = (0xC3C3C3C3u32 ^ (i / ts) as u32).to_le_bytes()[i % ts];
                            let want = if l >= active {
                                Some(guard)
                            } else {
                                m.map(|s| {
                                    s.and_then(|(r, cb)| {
                                        inside(f, i64::from(*x), i64::from(*y), r, cb)
                                    })
                                    .map_or(0, |o| surf[o])
                                })
                            };
                            if let Some(want) = want {
                                assert_eq!(lane[i], want, "{what} byte {i}");
                            }
                        }
                        for (i, got) in lane.iter().enumerate().skip(bytes) {
                            let guard = (0xC3C3C3C3u32 ^ (i / ts) as u32).to_le_bytes()[i % ts];
                            assert_eq!(*got, guard, "{what}: wrote past its destination");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn reads_at_sub_group_size_8() {
    check_reads(Kind::Read, 8);
}

#[test]
fn reads_at_sub_group_size_16() {
    check_reads(Kind::Read, 16);
}

#[test]
fn reads_at_sub_group_size_32() {
    check_reads(Kind::Read, 32);
}

#[test]
fn transform_and_transpose_reads_at_sub_group_sizes_8_16_32() {
    for w in [8, 16, 32] {
        check_reads(Kind::Transform, w);
        check_reads(Kind::Transpose, w);
    }
}

const GAP_ROWS: usize = 2;
const REGION: usize = (HEIGHT + GAP_ROWS) * PITCH;

fn check_writes(w: usize) {
    let Some(ctx) = context(w) else {
        return;
    };
    let funcs = functions(Kind::Write, w);
    let mut src = String::new();
    for f in &funcs {
        let (t, ts) = f.ctype();
        let n = byte_map(f, w)[0].len().div_ceil(ts);
        let name = f.name();
        let body = |prefix: &str, decl: &str| {
            format!(
                "__attribute__((intel_reqd_sub_group_size({w})))
kernel void {prefix}_{name}(global uchar* buf, int width, int height, int pitch,
                     global const int2* coords, uint active) {{
    uint g = get_group_id(0), l = get_sub_group_local_id();
    {decl}
    for (uint i = 0; i < {n}; i++) {{
        uint h = (g * 977u + l * 131u + i * 17u + 1u) * 2654435761u;
        d[i] = ({t})(h ^ (h >> 15));
    }}
    global uchar* surf = buf + {GAP_ROWS} * pitch + g * {REGION};
    if (l < active) {name}((global void*)surf, width, height, pitch, coords[g], d);
}}
"
            )
        };
        src += &body("k", &format!("{t} d[{n}];"));
        src += &body(
            "s",
            &format!("{t} d0[{n}], d1[{n}]; private {t}* d = (l & 1) ? d1 : d0;"),
        );
    }
    let program = ctx.build(&src, "-cl-std=CL3.0");
    for f in &funcs {
        let (_, ts) = f.ctype();
        let map = byte_map(f, w);
        let pos = positions(f);
        let len = GAP_ROWS * PITCH + pos.len() * REGION;
        let init = vec![0xEEu8; len];
        let coords = ctx.buffer_from(&pos);
        for prefix in ["k", "s"] {
            for active in [w, w - 3] {
                let buf = ctx.buffer_from(&init);
                let k = program.kernel(&format!("{prefix}_{}", f.name()));
                k.arg_buffer(0, &buf)
                    .arg(1, WIDTH as i32)
                    .arg(2, HEIGHT as i32)
                    .arg(3, PITCH as i32)
                    .arg_buffer(4, &coords)
                    .arg(5, active as u32);
                ctx.run(&k, &[pos.len() * w], Some(&[w]));
                let got: Vec<u8> = ctx.read(&buf, len);
                let mut want = init.clone();
                for (g, [x, y]) in pos.iter().enumerate() {
                    let base = GAP_ROWS * PITCH + g * REGION;
                    for (l, lane_map) in map.iter().enumerate().take(active) {
                        for (i, m) in lane_map.iter().enumerate() {
                            let Some(Some((r, cb))) = m else { continue };
                            if let Some(o) = inside(f, i64::from(*x), i64::from(*y), *r, *cb) {
                                want[base + o] = write_value(g, l, i / ts).to_le_bytes()[i % ts];
                            }
                        }
                    }
                }
                if let Some(i) = (0..len).find(|&i| got[i] != want[i]) {
                    let g = i.saturating_sub(GAP_ROWS * PITCH) / REGION;
                    panic!(
                        "{prefix}_{} w={w} active={active}: byte {i} (sub-group {g} at {:?}) is {:#x}, expected {:#x}",
                        f.name(),
                        pos.get(g),
                        got[i],
                        want[i]
                    );
                }
            }
        }
    }
}

#[test]
fn writes_at_sub_group_sizes_8_16_32() {
    for w in [8, 16, 32] {
        check_writes(w);
    }
}

/// sub_group_broadcast / intel_sub_group_shuffle of elements of a private array that
/// a block read filled: with a store to the element between the load and the
/// broadcast (the broadcast sees the loaded value), as 64-bit elements, and with a
/// per-lane shuffle index.
#[test]
fn broadcasts_of_private_elements_after_a_block_read() {
    let w = 16;
    let Some(ctx) = context(w) else {
        return;
    };
    let src = "
__attribute__((intel_reqd_sub_group_size(16)))
kernel void k(global uchar* surf, int width, int height, int pitch, global uint* out,
              global const uint* js) {
    uint l = get_sub_group_local_id();
    uint d[16];
    intel_sub_group_2d_block_read_32b_16r16x1c((global void*)surf, width, height, pitch,
                                               (int2)(4, 3), d);
    uint j = js[0], r = js[1];
    uint x = d[r];
    d[r] = 7u;
    uint a = sub_group_broadcast(x, j);
    uint b = sub_group_broadcast(d[r], j);
    ulong q = ((ulong*)d)[(r / 2 + 1) % 8];
    ulong c = sub_group_broadcast(q, (j + 1) % 16);
    uint s = intel_sub_group_shuffle(d[(r + 1) % 16], (l * 5) % 16);
    float f = sub_group_broadcast(as_float(d[(r + 2) % 16]), 15 - j);
    out[l * 6 + 0] = a;
    out[l * 6 + 1] = b;
    out[l * 6 + 2] = (uint)c;
    out[l * 6 + 3] = (uint)(c >> 32);
    out[l * 6 + 4] = s;
    out[l * 6 + 5] = as_uint(f);
}
";
    let program = ctx.build(src, "-cl-std=CL3.0");
    let surf = surface_bytes(HEIGHT * PITCH);
    let surf_buf = ctx.buffer_from(&surf);
    // Element (row, col) of the block at (4, 3): a uint.
    let el = |r: usize, c: usize| {
        let o = (3 + r) * PITCH + (4 + c) * 4;
        u32::from_le_bytes([surf[o], surf[o + 1], surf[o + 2], surf[o + 3]])
    };
    for (j, r) in [(0u32, 0u32), (5, 3), (15, 14), (9, 7)] {
        let js = ctx.buffer_from(&[j, r]);
        let out = ctx.buffer_zeroed::<u32>(w * 6);
        let k = program.kernel("k");
        k.arg_buffer(0, &surf_buf)
            .arg(1, WIDTH as i32)
            .arg(2, HEIGHT as i32)
            .arg(3, PITCH as i32)
            .arg_buffer(4, &out)
            .arg_buffer(5, &js);
        ctx.run(&k, &[w], Some(&[w]));
        let got: Vec<u32> = ctx.read(&out, w * 6);
        let (j, r) = (j as usize, r as usize);
        // Lane l holds column l of every row; the store replaced row r.
        let lane = |l: usize, i: usize| if i == r { 7 } else { el(i, l) };
        for l in 0..w {
            let q = (r / 2 + 1) % 8;
            let want = [
                el(r, j),
                7,
                lane((j + 1) % 16, 2 * q),
                lane((j + 1) % 16, 2 * q + 1),
                lane((l * 5) % 16, (r + 1) % 16),
                lane(15 - j, (r + 2) % 16),
            ];
            assert_eq!(&got[l * 6..l * 6 + 6], &want, "j={j} r={r} lane {l}");
        }
    }
}

/// work_group_broadcast of a private element a block read filled (a work-group
/// collective, never a deferred sub-group load), with two sub-groups.
#[test]
fn work_group_broadcast_of_a_private_element() {
    let w = 16;
    let Some(ctx) = context(w) else {
        return;
    };
    let src = "
__attribute__((intel_reqd_sub_group_size(16)))
kernel void k(global uchar* surf, int width, int height, int pitch, global uint* out,
              global const uint* js) {
    uint d[16];
    intel_sub_group_2d_block_read_32b_16r16x1c((global void*)surf, width, height, pitch,
                                               (int2)(4, 3), d);
    uint j = js[0], r = js[1];
    uint x = d[r];
    out[get_local_id(0)] = work_group_broadcast(x, j) + sub_group_broadcast(d[r], j % 16);
}
";
    let Ok(program) = ctx.try_build(src, "-cl-std=CL3.0") else {
        return; // no work-group collective functions
    };
    let surf = surface_bytes(HEIGHT * PITCH);
    let surf_buf = ctx.buffer_from(&surf);
    let el = |r: usize, c: usize| {
        let o = (3 + r) * PITCH + (4 + c) * 4;
        u32::from_le_bytes([surf[o], surf[o + 1], surf[o + 2], surf[o + 3]])
    };
    for (j, r) in [(0u32, 0u32), (21, 3), (31, 15)] {
        let js = ctx.buffer_from(&[j, r]);
        let out = ctx.buffer_zeroed::<u32>(2 * w);
        let k = program.kernel("k");
        k.arg_buffer(0, &surf_buf)
            .arg(1, WIDTH as i32)
            .arg(2, HEIGHT as i32)
            .arg(3, PITCH as i32)
            .arg_buffer(4, &out)
            .arg_buffer(5, &js);
        ctx.run(&k, &[2 * w], Some(&[2 * w]));
        let got: Vec<u32> = ctx.read(&out, 2 * w);
        let (j, r) = (j as usize, r as usize);
        let want = el(r, j % 16).wrapping_mul(2);
        assert_eq!(got, vec![want; 2 * w], "j={j} r={r}");
    }
}
