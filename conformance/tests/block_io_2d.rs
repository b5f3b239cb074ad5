//! cl_intel_subgroup_2d_block_io at sub-group size 16: every read (plain, transform,
//! transpose), write and prefetch function of the extension's tables, against a host
//! model of the SPV_INTEL_2d_block_io element-to-lane mapping, with blocks inside the
//! surface, across each edge and corner and outside it (reads give zero, writes are
//! dropped, nothing outside the surface changes); operands that break the spec's
//! rules; and the SPV_INTEL_2d_block_io instructions through clCreateProgramWithIL.
//!
//! A cranecl promise: on cranecl a missing extension fails; elsewhere the tests
//! return early.

use cranecl_conformance::sys::CL_INVALID_VALUE;
use cranecl_conformance::*;

#[path = "common/block2d_model.rs"]
mod model;
use model::*;

/// The sub-group size the extension requires.
const W: usize = 16;
/// The surface: bytes per row, rows, bytes from row to row.
const WIDTH: usize = 96;
const HEIGHT: usize = 40;
const PITCH: usize = 128;

const ALL_ROWS: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// The functions of the spec's tables.
fn functions(kind: Kind) -> Vec<Func> {
    let f = |bits, rows, cols, count| Func::new(kind, bits, rows, cols, count);
    let mut v = Vec::new();
    match kind {
        Kind::Read => {
            for r in ALL_ROWS {
                v.extend([
                    f(8, r, 32, 1),
                    f(8, r, 32, 2),
                    f(16, r, 16, 1),
                    f(16, r, 16, 2),
                ]);
                v.extend([f(32, r, 8, 1), f(32, r, 8, 2), f(32, r, 16, 1)]);
            }
            for r in [8, 16, 32] {
                v.push(f(8, r, 16, 4));
            }
        }
        Kind::Transform => {
            v.extend([f(8, 32, 16, 1), f(8, 32, 16, 2), f(8, 32, 16, 4)]);
            for r in [16, 32] {
                v.extend([f(16, r, 16, 1), f(16, r, 16, 2)]);
            }
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
        Kind::Prefetch => {
            for r in ALL_ROWS {
                v.extend([
                    f(8, r, 32, 1),
                    f(8, r, 32, 2),
                    f(16, r, 16, 1),
                    f(16, r, 16, 2),
                ]);
                v.extend([f(32, r, 8, 1), f(32, r, 16, 1), f(32, r, 8, 2)]);
            }
            v.extend([f(8, 32, 16, 1), f(8, 32, 16, 2)]);
            for r in [8, 16, 32] {
                v.push(f(8, r, 16, 4));
            }
        }
    }
    v
}

/// Bytes one lane reads or writes.
fn lane_bytes(f: &Func) -> usize {
    let cells = block_cells(f, W);
    cells[0].len() * f.lane_elem() * f.count
}

/// Byte offset of element (row, col) in the surface, if it is inside.
fn inside(row: i64, col: i64, esize: usize, width: usize, height: usize) -> Option<usize> {
    let in_bounds =
        row >= 0 && (row as usize) < height && col >= 0 && (col as usize + 1) * esize <= width;
    in_bounds.then(|| row as usize * PITCH + col as usize * esize)
}

/// The expected bytes of lane `l` of a read at (x, y): None where undefined.
fn expected_read(f: &Func, surf: &[u8], x: i64, y: i64, l: usize) -> Vec<Option<u8>> {
    let e = f.esize();
    let cells = block_cells(f, W);
    let mut out = Vec::new();
    for b in 0..f.count {
        let x0 = x + (b * f.cols) as i64;
        for cell in &cells[l] {
            let parts = match cell {
                None => {
                    out.extend(std::iter::repeat_n(None, f.lane_elem()));
                    continue;
                }
                Some(c) => c,
            };
            for p in parts {
                let bytes: Vec<u8> = match p {
                    Some((r, c)) => match inside(y + *r as i64, x0 + *c as i64, e, WIDTH, HEIGHT) {
                        Some(o) => surf[o..o + e].to_vec(),
                        None => vec![0; e],
                    },
                    None => vec![0; e],
                };
                out.extend(bytes.into_iter().map(Some));
            }
        }
    }
    out
}

/// The coordinates (elements, rows) every function is run at: inside, across each
/// edge and corner, flush with the far edges, just outside.
fn positions(f: &Func) -> Vec<[i32; 2]> {
    let e = f.esize();
    let row_elems = (WIDTH / e) as i64;
    let total = (f.cols * f.count) as i64;
    let half_x = (f.cols / 2) as i64;
    let rows = f.rows as i64;
    let half_y = (rows / 2).max(1);
    let h = HEIGHT as i64;
    let step = if e < 4 { (4 / e) as i64 } else { 1 };
    let xs = [
        0,
        2 * step,
        -half_x,
        row_elems - half_x,
        row_elems - total,
        row_elems,
        -total,
    ];
    let ys = [0, 1, -half_y, h - half_y, h - rows, h, -rows];
    let mut v = Vec::new();
    for y in ys {
        for x in xs {
            v.push([x as i32, y as i32]);
        }
    }
    v
}

fn available(ctx: &DeviceContext) -> bool {
    require(
        ctx.has_extension("cl_intel_subgroup_2d_block_io") && ctx.sub_group_sizes().contains(&W),
        "cl_intel_subgroup_2d_block_io with sub-group size 16",
    )
}

const OPTS: &str = "-cl-std=CL3.0";

/// A kernel per read function: sub-group `g` reads at `coords[g]` into a private
/// array with a guard tail, and copies the whole array out.
fn read_source(funcs: &[Func]) -> String {
    let mut src = String::new();
    for f in funcs {
        let (t, ts) = f.ctype();
        let n = lane_bytes(f) / ts;
        let name = f.name();
        src += &format!(
            "__attribute__((intel_reqd_sub_group_size(16)))
kernel void k_{name}(global uchar* surf, int width, int height, int pitch,
                     global const int2* coords, global {t}* out) {{
    int2 c = coords[get_group_id(0)];
    {t} d[{n} + 4];
    for (int i = 0; i < {n} + 4; i++) d[i] = ({t})(0xC3C3C3C3u ^ (uint)i);
    {name}((global void*)surf, width, height, pitch, c, d);
    for (int i = 0; i < {n} + 4; i++) out[get_global_id(0) * ({n} + 4) + i] = d[i];
}}
"
        );
    }
    src
}

fn check_reads(kind: Kind) {
    let ctx = DeviceContext::new();
    if !available(&ctx) {
        return;
    }
    let funcs = functions(kind);
    let program = ctx.build(&read_source(&funcs), OPTS);
    let named: Vec<(String, Func)> = funcs
        .iter()
        .map(|f| (format!("k_{}", f.name()), *f))
        .collect();
    check_loads(&ctx, &program, &named, true);
}

#[test]
fn reads_every_function_at_every_edge() {
    check_reads(Kind::Read);
}

#[test]
fn transform_reads_every_function_at_every_edge() {
    check_reads(Kind::Transform);
}

#[test]
fn transpose_reads_every_function_at_every_edge() {
    check_reads(Kind::Transpose);
}

/// Rows between two sub-groups' surfaces (and before the first), never written.
const GAP_ROWS: usize = 2;
const REGION: usize = (HEIGHT + GAP_ROWS) * PITCH;

#[test]
fn writes_every_function_at_every_edge() {
    let ctx = DeviceContext::new();
    if !available(&ctx) {
        return;
    }
    let funcs = functions(Kind::Write);
    let mut src = String::new();
    for f in &funcs {
        let (t, ts) = f.ctype();
        let n = lane_bytes(f) / ts;
        let name = f.name();
        src += &format!(
            "__attribute__((intel_reqd_sub_group_size(16)))
kernel void k_{name}(global uchar* buf, int width, int height, int pitch,
                     global const int2* coords) {{
    uint g = get_group_id(0), l = get_sub_group_local_id();
    {t} d[{n}];
    for (uint i = 0; i < {n}; i++) {{
        uint h = (g * 977u + l * 131u + i * 17u + 1u) * 2654435761u;
        d[i] = ({t})(h ^ (h >> 15));
    }}
    global uchar* surf = buf + {gap} * pitch + g * {region};
    {name}((global void*)surf, width, height, pitch, coords[g], d);
}}
",
            gap = GAP_ROWS,
            region = REGION,
        );
    }
    let program = ctx.build(&src, OPTS);
    for f in &funcs {
        let (_, ts) = f.ctype();
        let e = f.esize();
        let n = lane_bytes(f) / ts;
        let pos = positions(f);
        let len = GAP_ROWS * PITCH + pos.len() * REGION;
        let init = vec![0xEEu8; len];
        let buf = ctx.buffer_from(&init);
        let coords = ctx.buffer_from(&pos);
        let k = program.kernel(&format!("k_{}", f.name()));
        k.arg_buffer(0, &buf)
            .arg(1, WIDTH as i32)
            .arg(2, HEIGHT as i32)
            .arg(3, PITCH as i32)
            .arg_buffer(4, &coords);
        ctx.run(&k, &[pos.len() * W], Some(&[W]));
        let got: Vec<u8> = ctx.read(&buf, len);
        let mut want = init.clone();
        let cells = block_cells(f, W);
        for (g, [x, y]) in pos.iter().enumerate() {
            let base = GAP_ROWS * PITCH + g * REGION;
            for (l, lane_cells) in cells.iter().enumerate() {
                let data: Vec<u8> = (0..n)
                    .flat_map(|i| write_value(g, l, i).to_le_bytes()[..ts].to_vec())
                    .collect();
                for (i, cell) in lane_cells.iter().enumerate() {
                    let Some(Some((r, c))) = cell.as_ref().map(|c| c[0]) else {
                        continue;
                    };
                    let row = i64::from(*y) + r as i64;
                    let col = i64::from(*x) + c as i64;
                    if let Some(o) = inside(row, col, e, WIDTH, HEIGHT) {
                        want[base + o..base + o + e].copy_from_slice(&data[i * e..(i + 1) * e]);
                    }
                }
            }
        }
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            if g != w {
                let (region, off) = (
                    i.saturating_sub(GAP_ROWS * PITCH) / REGION,
                    i.saturating_sub(GAP_ROWS * PITCH) % REGION,
                );
                panic!(
                    "{}: byte {i} (sub-group {region} at {:?}, row {} byte {}) is {g:#x}, expected {w:#x}",
                    f.name(),
                    pos.get(region),
                    off / PITCH,
                    off % PITCH
                );
            }
        }
    }
}

#[test]
fn prefetches_every_function_and_change_nothing() {
    let ctx = DeviceContext::new();
    if !available(&ctx) {
        return;
    }
    let funcs = functions(Kind::Prefetch);
    let mut src = String::new();
    for f in &funcs {
        let name = f.name();
        src += &format!(
            "__attribute__((intel_reqd_sub_group_size(16)))
kernel void k_{name}(global uchar* surf, int width, int height, int pitch,
                     global const int2* coords, global int* ran) {{
    {name}((global void*)surf, width, height, pitch, coords[get_group_id(0)]);
    ran[get_global_id(0)] = 1;
}}
"
        );
    }
    let program = ctx.build(&src, OPTS);
    let surf = surface_bytes(HEIGHT * PITCH);
    let buf = ctx.buffer_from(&surf);
    for f in &funcs {
        // Every position, and operands that break the rules (width 0, height 0).
        for (width, height) in [(WIDTH, HEIGHT), (0, 0)] {
            let pos = positions(f);
            let coords = ctx.buffer_from(&pos);
            let ran = ctx.buffer_zeroed::<i32>(pos.len() * W);
            let k = program.kernel(&format!("k_{}", f.name()));
            k.arg_buffer(0, &buf)
                .arg(1, width as i32)
                .arg(2, height as i32)
                .arg(3, PITCH as i32)
                .arg_buffer(4, &coords)
                .arg_buffer(5, &ran);
            ctx.run(&k, &[pos.len() * W], Some(&[W]));
            let r: Vec<i32> = ctx.read(&ran, pos.len() * W);
            assert!(r.iter().all(|&v| v == 1), "{} did not run", f.name());
        }
    }
    let after: Vec<u8> = ctx.read(&buf, surf.len());
    assert!(after == surf, "a prefetch changed memory");
}

/// Operands the spec's rules forbid (behaviour undefined there): cranecl treats the
/// surface as empty, so reads give zeros and writes change nothing.
#[test]
fn operands_breaking_the_rules_read_zero_and_write_nothing() {
    let ctx = DeviceContext::new();
    if !available(&ctx) {
        return;
    }
    let src = "
__attribute__((intel_reqd_sub_group_size(16)))
kernel void rd(global uchar* surf, int offset, int width, int height, int pitch, int x,
               global ushort* out) {
    ushort d[8];
    intel_sub_group_2d_block_read_16b_8r16x1c((global void*)(surf + offset), width, height,
                                              pitch, (int2)(x, 0), d);
    for (int i = 0; i < 8; i++) out[get_global_id(0) * 8 + i] = d[i];
}
__attribute__((intel_reqd_sub_group_size(16)))
kernel void wr(global uchar* surf, int offset, int width, int height, int pitch, int x) {
    uint d[4] = {1, 2, 3, 4};
    intel_sub_group_2d_block_write_32b_4r16x1c((global void*)(surf + offset), width, height,
                                               pitch, (int2)(x, 0), d);
}
";
    let program = ctx.build(src, OPTS);
    let surf = surface_bytes(HEIGHT * PITCH);
    // (base offset, width, height, pitch, x): each breaks one rule; the first is valid.
    let cases: [(i32, i32, i32, i32, i32); 11] = [
        (0, 96, 40, 128, 0),
        (0, 60, 40, 128, 0),                         // width below 64
        (0, (1 << 24) + 64, 40, (1 << 24) + 128, 0), // width above 2^24
        (0, 96, (1 << 24) + 1, 128, 0),              // height above 2^24
        (0, 98, 40, 128, 0),                         // width not a multiple of 4
        (0, 96, 0, 128, 0),                          // height 0
        (0, 96, -1, 128, 0),                         // height negative
        (0, 128, 40, 96, 0),                         // pitch below the width
        (0, 96, 40, 100, 0),                         // pitch not a multiple of 8
        (32, 96, 40, 128, 0),                        // base not 64-byte aligned
        (0, 96, 40, 128, 1), // x not a multiple of 2 for 16-bit data (fine for 32-bit)
    ];
    for (i, (offset, width, height, pitch, x)) in cases.into_iter().enumerate() {
        let buf = ctx.buffer_from(&surf);
        let out = ctx.buffer_zeroed::<u16>(W * 8);
        let rd = program.kernel("rd");
        rd.arg_buffer(0, &buf)
            .arg(1, offset)
            .arg(2, width)
            .arg(3, height)
            .arg(4, pitch)
            .arg(5, x)
            .arg_buffer(6, &out);
        ctx.run(&rd, &[W], Some(&[W]));
        let got: Vec<u16> = ctx.read(&out, W * 8);
        let wr = program.kernel("wr");
        wr.arg_buffer(0, &buf)
            .arg(1, offset)
            .arg(2, width)
            .arg(3, height)
            .arg(4, pitch)
            .arg(5, x);
        ctx.run(&wr, &[W], Some(&[W]));
        let after: Vec<u8> = ctx.read(&buf, surf.len());
        if i == 0 {
            // The valid surface: lane l, row r reads element (r, l).
            for l in 0..W {
                for r in 0..8 {
                    let o = r * 128 + l * 2;
                    let want = u16::from_le_bytes([surf[o], surf[o + 1]]);
                    assert_eq!(got[l * 8 + r], want, "valid read lane {l} row {r}");
                }
            }
            assert!(after != surf, "the valid write wrote");
        } else {
            assert!(
                got.iter().all(|&v| v == 0),
                "case {i}: the read is not zero"
            );
            if x == 1 {
                // The 32-bit write may start at any column: row 0, columns 1.. change.
                assert_eq!(&after[4..8], &1u32.to_le_bytes(), "32-bit write at x = 1");
                assert_eq!(&after[..4], &surf[..4], "32-bit write at x = 1");
            } else {
                assert!(after == surf, "case {i}: the write changed memory");
            }
        }
    }
}

/// The same operations as SPV_INTEL_2d_block_io instructions (clang-22 emits them for
/// the `__spirv_Subgroup2DBlock*INTEL` built-ins with the extension enabled), run
/// through clCreateProgramWithIL and checked against the same model.
const SPIRV_SRC: &str = "
void __attribute__((overloadable)) __spirv_Subgroup2DBlockLoadINTEL(
    int, int, int, int, const global void*, int, int, int, int2, private void*);
void __attribute__((overloadable)) __spirv_Subgroup2DBlockLoadTransformINTEL(
    int, int, int, int, const global void*, int, int, int, int2, private void*);
void __attribute__((overloadable)) __spirv_Subgroup2DBlockLoadTransposeINTEL(
    int, int, int, int, const global void*, int, int, int, int2, private void*);
void __attribute__((overloadable)) __spirv_Subgroup2DBlockPrefetchINTEL(
    int, int, int, int, const global void*, int, int, int, int2);
void __attribute__((overloadable)) __spirv_Subgroup2DBlockStoreINTEL(
    int, int, int, int, const private void*, global void*, int, int, int, int2);

#define LOADER(NAME, OP, E, BW, BH, BC, N)                                              \\
__attribute__((intel_reqd_sub_group_size(16)))                                        \\
kernel void NAME(global uchar* surf, int width, int height, int pitch,                 \\
                 global const int2* coords, global uchar* out) {                       \\
    uchar d[N];                                                                        \\
    __spirv_Subgroup2DBlock##OP##INTEL(E, BW, BH, BC, surf, width, height, pitch,      \\
                                       coords[get_group_id(0)], d);                    \\
    __spirv_Subgroup2DBlockPrefetchINTEL(E, BW, BH, BC, surf, width, height, pitch,    \\
                                         coords[get_group_id(0)]);                     \\
    for (int i = 0; i < N; i++) out[get_global_id(0) * N + i] = d[i];                  \\
}
LOADER(load_16b_8r16x2c, Load, 2, 16, 8, 2, 32)
LOADER(load_8b_4r32x2c, Load, 1, 32, 4, 2, 16)
LOADER(transform_8b_32r16x2c, LoadTransform, 1, 16, 32, 2, 64)
LOADER(transform_16b_16r16x1c, LoadTransform, 2, 16, 16, 1, 32)
LOADER(transpose_32b_32r8x1c, LoadTranspose, 4, 8, 32, 1, 64)

__attribute__((intel_reqd_sub_group_size(16)))
kernel void store_8b_4r32x1c(global uchar* buf, int width, int height, int pitch,
                             global const int2* coords) {
    uint g = get_group_id(0), l = get_sub_group_local_id();
    ushort d[4];
    for (uint i = 0; i < 4; i++) {
        uint h = (g * 977u + l * 131u + i * 17u + 1u) * 2654435761u;
        d[i] = (ushort)(h ^ (h >> 15));
    }
    __spirv_Subgroup2DBlockStoreINTEL(1, 32, 4, 1, d, buf + 2 * pitch + g * REGION,
                                      width, height, pitch, coords[g]);
}
";

fn spirv_module(ctx: &DeviceContext, src: &str) -> Option<Vec<u8>> {
    if !available(ctx) || !require(ctx.supports_spirv(), "SPIR-V") {
        return None;
    }
    let region = format!("-DREGION={REGION}");
    let opts = ["-mllvm", "-spirv-ext=+SPV_INTEL_2d_block_io", &region];
    match cranecl_conformance::spirv::compile(src, &opts) {
        Ok(il) => Some(il),
        Err(e) => {
            require(false, &format!("clang-22 for SPIR-V ({e})"));
            None
        }
    }
}

/// The opcodes of a module's instructions.
fn opcodes(il: &[u8]) -> Vec<u32> {
    let words: Vec<u32> = il
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut ops = Vec::new();
    let mut i = 5;
    while i < words.len() {
        let n = (words[i] >> 16) as usize;
        ops.push(words[i] & 0xffff);
        i += n.max(1);
    }
    ops
}

#[test]
fn spirv_instructions_match_the_built_ins() {
    let ctx = DeviceContext::new();
    let Some(il) = spirv_module(&ctx, SPIRV_SRC) else {
        return;
    };
    let ops = opcodes(&il);
    for op in 6231..=6235 {
        assert!(ops.contains(&op), "clang emitted no opcode {op}");
    }
    let program = ctx
        .try_build_il(&il, "")
        .unwrap_or_else(|f| panic!("SPIR-V with SPV_INTEL_2d_block_io: {f}"));
    let f = Func::new;
    let loads = [
        ("load_16b_8r16x2c", f(Kind::Read, 16, 8, 16, 2)),
        ("load_8b_4r32x2c", f(Kind::Read, 8, 4, 32, 2)),
        ("transform_8b_32r16x2c", f(Kind::Transform, 8, 32, 16, 2)),
        ("transform_16b_16r16x1c", f(Kind::Transform, 16, 16, 16, 1)),
        ("transpose_32b_32r8x1c", f(Kind::Transpose, 32, 32, 8, 1)),
    ];
    check_loads(&ctx, &program, &loads, false);
    // The store: compared with the write built-in of the same shape.
    let func = f(Kind::Write, 8, 4, 32, 1);
    let pos = positions(&func);
    let len = GAP_ROWS * PITCH + pos.len() * REGION;
    let init = vec![0xEEu8; len];
    let buf = ctx.buffer_from(&init);
    let coords = ctx.buffer_from(&pos);
    let k = program.kernel("store_8b_4r32x1c");
    k.arg_buffer(0, &buf)
        .arg(1, WIDTH as i32)
        .arg(2, HEIGHT as i32)
        .arg(3, PITCH as i32)
        .arg_buffer(4, &coords);
    ctx.run(&k, &[pos.len() * W], Some(&[W]));
    let got: Vec<u8> = ctx.read(&buf, len);
    let mut want = init.clone();
    for (g, [x, y]) in pos.iter().enumerate() {
        let base = GAP_ROWS * PITCH + g * REGION;
        for l in 0..W {
            // Lane l holds columns 2l, 2l+1 of each row, as one ushort per row.
            for r in 0..4 {
                let v = (write_value(g, l, r) as u16).to_le_bytes();
                for (j, byte) in v.iter().enumerate() {
                    let col = i64::from(*x) + (2 * l + j) as i64;
                    if let Some(o) = inside(i64::from(*y) + r as i64, col, 1, WIDTH, HEIGHT) {
                        want[base + o] = *byte;
                    }
                }
            }
        }
    }
    assert!(
        got == want,
        "OpSubgroup2DBlockStoreINTEL differs from the model"
    );
}

/// A block size outside the extension's tables, or an instruction whose capability
/// the module does not declare, is refused.
/// Runs each load kernel `(name, function)` of `program` (arguments: surface,
/// width, height, pitch, coordinates per sub-group, output) at every position and
/// compares every defined byte with the model. With `guard`, each lane's output is
/// followed by 4 elements of the private array's guard tail (see `read_source`),
/// which must be untouched.
fn check_loads<N: AsRef<str>>(
    ctx: &DeviceContext,
    program: &Program,
    loads: &[(N, Func)],
    guard: bool,
) {
    let surf = surface_bytes(HEIGHT * PITCH);
    let surf_buf = ctx.buffer_from(&surf);
    for (name, func) in loads {
        let name = name.as_ref();
        let bytes = lane_bytes(func);
        let (_, ts) = func.ctype();
        let n = if guard { bytes + 4 * ts } else { bytes };
        let pos = positions(func);
        let coords = ctx.buffer_from(&pos);
        let out = ctx.buffer_zeroed::<u8>(pos.len() * W * n);
        let k = program.kernel(name);
        k.arg_buffer(0, &surf_buf)
            .arg(1, WIDTH as i32)
            .arg(2, HEIGHT as i32)
            .arg(3, PITCH as i32)
            .arg_buffer(4, &coords)
            .arg_buffer(5, &out);
        ctx.run(&k, &[pos.len() * W], Some(&[W]));
        let got: Vec<u8> = ctx.read(&out, pos.len() * W * n);
        for (g, [x, y]) in pos.iter().enumerate() {
            for l in 0..W {
                let want = expected_read(func, &surf, i64::from(*x), i64::from(*y), l);
                assert_eq!(want.len(), bytes, "{name}");
                let lane = &got[(g * W + l) * n..(g * W + l + 1) * n];
                for (i, w) in want.iter().enumerate() {
                    if let Some(w) = w {
                        assert_eq!(lane[i], *w, "{name} at ({x}, {y}): lane {l} byte {i}");
                    }
                }
                for j in (0..4).filter(|_| guard) {
                    let tail = (0xC3C3C3C3u32 ^ (bytes / ts + j) as u32).to_le_bytes();
                    let o = bytes + j * ts;
                    assert_eq!(
                        &lane[o..o + ts],
                        &tail[..ts],
                        "{name} wrote past its destination"
                    );
                }
            }
        }
    }
}

/// One load of each row of the OpenCL C read tables not covered above, as the
/// SPV_INTEL_2d_block_io instructions through clCreateProgramWithIL, against the
/// model (all sub-groups at every position).
#[test]
fn spirv_loads_of_the_other_shapes() {
    let ctx = DeviceContext::new();
    let f = Func::new;
    let loads = [
        f(Kind::Read, 8, 8, 32, 1),
        f(Kind::Read, 8, 32, 32, 2),
        f(Kind::Read, 8, 16, 16, 4),
        f(Kind::Read, 16, 32, 16, 1),
        f(Kind::Read, 16, 1, 16, 2),
        f(Kind::Read, 32, 2, 8, 1),
        f(Kind::Read, 32, 4, 8, 2),
        f(Kind::Read, 32, 8, 16, 1),
        f(Kind::Transform, 8, 32, 16, 1),
        f(Kind::Transform, 8, 32, 16, 4),
        f(Kind::Transform, 16, 32, 16, 2),
        f(Kind::Transpose, 32, 16, 8, 1),
    ];
    let prefix = &SPIRV_SRC[..SPIRV_SRC
        .find("LOADER(load_16b_8r16x2c")
        .expect("the LOADER macro")];
    let mut src = prefix.to_string();
    let op = |k: Kind| match k {
        Kind::Transform => "LoadTransform",
        Kind::Transpose => "LoadTranspose",
        _ => "Load",
    };
    let name = |g: &Func| {
        format!(
            "k_{:?}_{}b_{}r{}x{}c",
            g.kind, g.bits, g.rows, g.cols, g.count
        )
    };
    for g in &loads {
        src += &format!(
            "LOADER({}, {}, {}, {}, {}, {}, {})\n",
            name(g),
            op(g.kind),
            g.esize(),
            g.cols,
            g.rows,
            g.count,
            lane_bytes(g)
        );
    }
    let Some(il) = spirv_module(&ctx, &src) else {
        return;
    };
    let program = ctx
        .try_build_il(&il, "")
        .unwrap_or_else(|e| panic!("SPIR-V with SPV_INTEL_2d_block_io: {e}"));
    let named: Vec<(String, Func)> = loads.iter().map(|g| (name(g), *g)).collect();
    check_loads(&ctx, &program, &named, false);
}

#[test]
fn spirv_refuses_unsupported_shapes_and_missing_capabilities() {
    let ctx = DeviceContext::new();
    let bad_shape = SPIRV_SRC.replace(
        "LOADER(load_16b_8r16x2c, Load, 2, 16, 8, 2, 32)",
        "LOADER(load_16b_8r16x3c, Load, 2, 16, 8, 3, 48)",
    );
    let Some(il) = spirv_module(&ctx, &bad_shape) else {
        return;
    };
    match ctx.try_build_il(&il, "") {
        Ok(_) => panic!("a 16-bit load of 3 blocks was accepted"),
        Err(f) => assert!(
            f.log
                .contains("not a block size of cl_intel_subgroup_2d_block_io"),
            "unexpected failure: {f}"
        ),
    }
    // Capabilities turned into second Kernel capabilities (6), so that the module
    // uses instructions it no longer declares: transform (6229), transpose (6230),
    // and all three (the I/O capability 6228 is implied by the other two).
    let Some(il) = spirv_module(&ctx, SPIRV_SRC) else {
        return;
    };
    let words: Vec<u32> = il
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    for (caps, what) in [
        (&[6229u32][..], "transform"),
        (&[6230][..], "transpose"),
        (&[6228, 6229, 6230][..], "2D block I/O"),
    ] {
        let mut w = words.clone();
        for &cap_id in caps {
            let cap = w
                .windows(2)
                .position(|x| x == [(2 << 16) | 17, cap_id])
                .unwrap_or_else(|| panic!("OpCapability {cap_id}"));
            w[cap + 1] = 6;
        }
        let il: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        match ctx.try_build_il(&il, "") {
            Ok(_) => panic!("{what} instructions without their capability were accepted"),
            // The validator's verdict at clCreateProgramWithIL.
            Err(f) => assert_eq!(f.code, CL_INVALID_VALUE, "{what}: unexpected failure: {f}"),
        }
    }
}

/// SPIR-V from elsewhere calling the built-ins as imported functions: by their plain
/// names (a program that declared them itself) and by their mangled names (Intel's
/// overloadable declarations).
#[test]
fn spirv_imports_of_the_built_ins_by_plain_and_mangled_name() {
    let ctx = DeviceContext::new();
    for attr in ["", "__attribute__((overloadable))"] {
        let src = format!(
            "
void {attr} intel_sub_group_2d_block_read_16b_4r16x2c(global void*, int, int, int, int2,
                                                       private ushort*);
__attribute__((intel_reqd_sub_group_size(16)))
kernel void k(global uchar* surf, int width, int height, int pitch,
              global const int2* coords, global ushort* out) {{
    ushort d[8];
    intel_sub_group_2d_block_read_16b_4r16x2c(surf, width, height, pitch,
                                              coords[get_group_id(0)], d);
    for (int i = 0; i < 8; i++) out[get_global_id(0) * 8 + i] = d[i];
}}
"
        );
        let Some(il) = spirv_module(&ctx, &src) else {
            return;
        };
        let program = ctx
            .try_build_il(&il, "")
            .unwrap_or_else(|f| panic!("import with {attr:?}: {f}"));
        let func = Func::new(Kind::Read, 16, 4, 16, 2);
        let surf = surface_bytes(HEIGHT * PITCH);
        let surf_buf = ctx.buffer_from(&surf);
        let pos = positions(&func);
        let coords = ctx.buffer_from(&pos);
        let out = ctx.buffer_zeroed::<u8>(pos.len() * W * 16);
        let k = program.kernel("k");
        k.arg_buffer(0, &surf_buf)
            .arg(1, WIDTH as i32)
            .arg(2, HEIGHT as i32)
            .arg(3, PITCH as i32)
            .arg_buffer(4, &coords)
            .arg_buffer(5, &out);
        ctx.run(&k, &[pos.len() * W], Some(&[W]));
        let got: Vec<u8> = ctx.read(&out, pos.len() * W * 16);
        for (g, [x, y]) in pos.iter().enumerate() {
            for l in 0..W {
                let want = expected_read(&func, &surf, i64::from(*x), i64::from(*y), l);
                let lane = &got[(g * W + l) * 16..(g * W + l + 1) * 16];
                let want: Vec<u8> = want.into_iter().map(|b| b.expect("defined")).collect();
                assert_eq!(lane, &want[..], "{attr:?} at ({x}, {y}) lane {l}");
            }
        }
    }
}
