//! cl_khr_extended_async_copies: `async_work_group_copy_2D2D`/`_3D3D` in both
//! directions against a host reference (element sizes 1 to 64 bytes, pitches and
//! plane areas larger than the copied lines and planes, offsets on both sides, empty
//! copies), once per work-group whatever the number of sub-groups, in 1D, 2D and 3D
//! work-groups, events shared between copies; and the `NonSemantic.Codeplay.GroupAsyncCopies` SPIR-V
//! instructions, run and refused when misused.

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

const EXT: &str = "cl_khr_extended_async_copies";
/// cl_khr_spirv_queries (cl_ext.h).
const CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR: cl_uint = 0x12B9;
const SET: &str = "NonSemantic.Codeplay.GroupAsyncCopies";

/// Bytes the kernels fill untouched memory with.
const MARK: u8 = 0xEE;

/// One copy's shape, in elements: 2D when `planes` is 1 and the plane areas 0.
#[derive(Clone, Copy, Debug)]
struct Shape {
    elem: usize,
    per_line: usize,
    lines: usize,
    planes: usize,
    src_off: usize,
    src_line: usize,
    src_plane: usize,
    dst_off: usize,
    dst_line: usize,
    dst_plane: usize,
}

impl Shape {
    /// Bytes a side spans from its base: (offset, line length, plane area).
    fn span(&self, off: usize, line: usize, plane: usize) -> usize {
        if self.lines == 0 || self.planes == 0 || self.per_line == 0 {
            return off * self.elem;
        }
        (off + (self.planes - 1) * plane + (self.lines - 1) * line + self.per_line) * self.elem
    }
    fn src_span(&self) -> usize {
        self.span(self.src_off, self.src_line, self.src_plane)
    }
    fn dst_span(&self) -> usize {
        self.span(self.dst_off, self.dst_line, self.dst_plane)
    }

    /// The host reference: copies from `src` into `dst` as the extension says.
    fn apply(&self, src: &[u8], dst: &mut [u8]) {
        let e = self.elem;
        for p in 0..self.planes {
            for l in 0..self.lines {
                let s = (self.src_off + p * self.src_plane + l * self.src_line) * e;
                let d = (self.dst_off + p * self.dst_plane + l * self.dst_line) * e;
                let n = self.per_line * e;
                if n == 0 {
                    continue;
                }
                dst[d..d + n].copy_from_slice(&src[s..s + n]);
            }
        }
    }
}

/// Kernels: `g2l` copies each group's window of `src` into local memory (pre-filled
/// with MARK), every work-item then adds 1 to its share of the local bytes (a copy
/// repeated by a later sub-group would undo the additions), and the whole local
/// buffer is dumped to `out`. `l2g` fills local memory from `in`, copies it into the
/// group's window of `dst`.
const SRC: &str = r#"
#ifndef cl_khr_extended_async_copies
#error "cl_khr_extended_async_copies is not defined"
#endif
#pragma OPENCL EXTENSION cl_khr_extended_async_copies : enable

kernel void g2l(global const uchar* src, global uchar* out, local uchar* loc,
                ulong elem, ulong per_line, ulong lines, ulong planes,
                ulong src_off, ulong src_line, ulong src_plane,
                ulong dst_off, ulong dst_line, ulong dst_plane,
                ulong loc_bytes, ulong window, int three_d) {
    // Linear ids by hand: the kernels also build as OpenCL C 1.x.
    size_t l = get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2));
    size_t n = get_local_size(0) * get_local_size(1) * get_local_size(2);
    size_t g = get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2));
    for (size_t i = l; i < loc_bytes; i += n) loc[i] = 0xEE;
    barrier(CLK_LOCAL_MEM_FENCE);
    // The group's window starts `window` elements further per group.
    ulong off = src_off + g * window;
    event_t e;
    if (three_d)
        e = async_work_group_copy_3D3D(loc, dst_off, src, off, elem, per_line, lines,
                                       planes, src_line, src_plane, dst_line, dst_plane, 0);
    else
        e = async_work_group_copy_2D2D(loc, dst_off, src, off, elem, per_line, lines,
                                       src_line, dst_line, 0);
    wait_group_events(1, &e);
    for (size_t i = l; i < loc_bytes; i += n) loc[i] += 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t i = l; i < loc_bytes; i += n) out[g * loc_bytes + i] = loc[i];
}

kernel void l2g(global const uchar* in, global uchar* dst, local uchar* loc,
                ulong elem, ulong per_line, ulong lines, ulong planes,
                ulong src_off, ulong src_line, ulong src_plane,
                ulong dst_off, ulong dst_line, ulong dst_plane,
                ulong loc_bytes, ulong window, int three_d) {
    // Linear ids by hand: the kernels also build as OpenCL C 1.x.
    size_t l = get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2));
    size_t n = get_local_size(0) * get_local_size(1) * get_local_size(2);
    size_t g = get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2));
    for (size_t i = l; i < loc_bytes; i += n) loc[i] = in[g * loc_bytes + i];
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong off = dst_off + g * window;
    event_t e;
    if (three_d)
        e = async_work_group_copy_3D3D(dst, off, loc, src_off, elem, per_line, lines,
                                       planes, src_line, src_plane, dst_line, dst_plane, 0);
    else
        e = async_work_group_copy_2D2D(dst, off, loc, src_off, elem, per_line, lines,
                                       src_line, dst_line, 0);
    wait_group_events(1, &e);
}
"#;

fn extension(ctx: &DeviceContext) -> bool {
    require(ctx.has_extension(EXT), EXT)
}

/// Deterministic bytes with no period shorter than the buffers.
fn pattern(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = TestRng::new(seed);
    (0..n).map(|_| rng.next_u32() as u8).collect()
}

fn set_shape_args(k: &Kernel, s: &Shape, loc_bytes: usize, window: usize, three_d: bool) {
    let words = [
        s.elem,
        s.per_line,
        s.lines,
        s.planes,
        s.src_off,
        s.src_line,
        s.src_plane,
        s.dst_off,
        s.dst_line,
        s.dst_plane,
        loc_bytes,
        window,
    ];
    for (i, w) in words.iter().enumerate() {
        k.arg(3 + i as u32, *w as u64);
    }
    k.arg(15, i32::from(three_d));
}

/// Work-group layouts: the number of groups (along dimension 0) and the local size,
/// in 1D, 2D and 3D.
const LAYOUTS: [(usize, &[usize]); 5] = [
    (3, &[32]),
    (2, &[7]),
    (2, &[1]),
    (2, &[4, 3]),
    (2, &[2, 3, 2]),
];

/// The global size of `groups` work-groups of `local` laid along dimension 0.
fn global_of(groups: usize, local: &[usize]) -> Vec<usize> {
    let mut g = local.to_vec();
    g[0] *= groups;
    g
}

/// Runs `g2l` and `l2g` for shape `s` with each layout of work-groups and compares
/// every byte of local memory (g2l) and of the destination buffer (l2g).
fn check_both_directions(ctx: &DeviceContext, program: &Program, s: Shape, three_d: bool) {
    for (groups, local) in LAYOUTS {
        let global = global_of(groups, local);
        // global -> local: the source windows of consecutive groups overlap or not,
        // whatever the shape says; a window is the source span rounded to elements.
        let window = s.src_span().div_ceil(s.elem);
        let src_bytes = (groups * window) * s.elem + s.src_span();
        let src = pattern(src_bytes.max(1), 7 + s.elem as u64);
        let loc_bytes = s.dst_span().max(1);
        let out = ctx.buffer_zeroed::<u8>(groups * loc_bytes);
        let src_buf = ctx.buffer_from(&src);
        let k = program.kernel("g2l");
        k.arg_buffer(0, &src_buf)
            .arg_buffer(1, &out)
            .arg_local(2, loc_bytes);
        set_shape_args(&k, &s, loc_bytes, window, three_d);
        ctx.run(&k, &global, Some(local));
        let got: Vec<u8> = ctx.read(&out, groups * loc_bytes);
        for g in 0..groups {
            let mut want = vec![MARK; loc_bytes];
            let mut shifted = s;
            shifted.src_off += g * window;
            shifted.apply(&src, &mut want);
            want.iter_mut().for_each(|b| *b = b.wrapping_add(1));
            assert!(
                got[g * loc_bytes..(g + 1) * loc_bytes] == want[..],
                "global->local {s:?} 3D {three_d}, group {g} of {groups} x {local:?}: \
                 got {:?}, want {want:?}",
                &got[g * loc_bytes..(g + 1) * loc_bytes]
            );
        }

        // local -> global: each group writes its own window of the destination.
        let loc_bytes = s.src_span().max(1);
        let window = s.dst_span().div_ceil(s.elem);
        let dst_bytes = groups * window * s.elem + s.dst_span();
        let input = pattern((groups * loc_bytes).max(1), 11 + s.elem as u64);
        let dst = ctx.buffer_from(&vec![MARK; dst_bytes.max(1)]);
        let in_buf = ctx.buffer_from(&input);
        let k = program.kernel("l2g");
        k.arg_buffer(0, &in_buf)
            .arg_buffer(1, &dst)
            .arg_local(2, loc_bytes);
        set_shape_args(&k, &s, loc_bytes, window, three_d);
        ctx.run(&k, &global, Some(local));
        let got: Vec<u8> = ctx.read(&dst, dst_bytes.max(1));
        let mut want = vec![MARK; dst_bytes.max(1)];
        for g in 0..groups {
            let mut shifted = s;
            shifted.dst_off += g * window;
            shifted.apply(&input[g * loc_bytes..(g + 1) * loc_bytes], &mut want);
        }
        assert!(
            got == want,
            "local->global {s:?} 3D {three_d}, {groups} x {local:?}: got {got:?}, want {want:?}"
        );
    }
}

const ELEMENT_SIZES: [usize; 10] = [1, 2, 3, 4, 8, 12, 16, 32, 64, 128];

#[test]
fn copies_2d_both_directions_match_the_host() {
    let ctx = DeviceContext::new();
    if !extension(&ctx) {
        return;
    }
    let program = ctx.build(SRC, "");
    // (per_line, lines, src_off, src_line, dst_off, dst_line)
    let shapes = [
        (5, 3, 0, 5, 0, 5), // packed on both sides
        (5, 3, 2, 9, 0, 5), // source pitch larger than the line, offset
        (5, 3, 0, 5, 3, 8), // destination pitch larger, offset
        (4, 4, 1, 7, 2, 6), // both pitches larger, both offsets
        (1, 7, 1, 4, 0, 1), // a column into a line (the strided-copy case)
        (6, 1, 0, 6, 0, 6), // one line
        (3, 0, 1, 3, 1, 3), // no line: nothing copied
        (0, 3, 0, 2, 0, 2), // empty lines: nothing copied
    ];
    for elem in ELEMENT_SIZES {
        for (per_line, lines, src_off, src_line, dst_off, dst_line) in shapes {
            let s = Shape {
                elem,
                per_line,
                lines,
                planes: 1,
                src_off,
                src_line,
                src_plane: 0,
                dst_off,
                dst_line,
                dst_plane: 0,
            };
            check_both_directions(&ctx, &program, s, false);
        }
    }
}

/// The grid of the Khronos CTS tests `async_copy_*2D` (which skip every case on a
/// device whose local memory exceeds 8 bytes per work-item of its largest
/// work-group, as here): element sizes 1-8, 13, 16, 32, 47 and 64 bytes, 10 elements
/// per line, source and destination margins of 0, 10 and 100 elements, 13 lines (or
/// as many as 48 KiB of local memory holds).
#[test]
fn copies_2d_over_the_cts_grid() {
    let ctx = DeviceContext::new();
    if !extension(&ctx) {
        return;
    }
    let program = ctx.build(SRC, "");
    for elem in [1, 2, 3, 4, 5, 6, 7, 8, 13, 16, 32, 47, 64] {
        for src_margin in [0, 10, 100] {
            for dst_margin in [0, 10, 100] {
                // 13 lines, fewer where the local side would exceed 48 KiB.
                let pitch = elem * (10 + src_margin.max(dst_margin));
                let lines = (48 * 1024 / pitch).min(13);
                let s = Shape {
                    elem,
                    per_line: 10,
                    lines,
                    planes: 1,
                    src_off: 0,
                    src_line: 10 + src_margin,
                    src_plane: 0,
                    dst_off: 0,
                    dst_line: 10 + dst_margin,
                    dst_plane: 0,
                };
                check_both_directions(&ctx, &program, s, false);
            }
        }
    }
}

#[test]
fn copies_3d_both_directions_match_the_host() {
    let ctx = DeviceContext::new();
    if !extension(&ctx) {
        return;
    }
    let program = ctx.build(SRC, "");
    // (per_line, lines, planes, src_off, src_line, src_plane, dst_off, dst_line, dst_plane)
    let shapes = [
        (4, 3, 2, 0, 4, 12, 0, 4, 12), // packed
        (4, 3, 2, 1, 6, 20, 0, 4, 12), // source line and plane margins
        (4, 3, 3, 0, 4, 12, 2, 5, 17), // destination margins
        (3, 2, 2, 3, 7, 15, 1, 3, 9),  // both, offsets
        (2, 1, 4, 0, 2, 5, 0, 2, 2),   // one line per plane
        (1, 4, 2, 0, 3, 13, 1, 1, 4),  // columns
        (3, 2, 0, 0, 3, 6, 0, 3, 6),   // no plane: nothing copied
    ];
    for elem in ELEMENT_SIZES {
        for (per_line, lines, planes, src_off, src_line, src_plane, dst_off, dst_line, dst_plane) in
            shapes
        {
            let s = Shape {
                elem,
                per_line,
                lines,
                planes,
                src_off,
                src_line,
                src_plane,
                dst_off,
                dst_line,
                dst_plane,
            };
            check_both_directions(&ctx, &program, s, true);
        }
    }
}

/// The macro and the built-ins exist in every OpenCL C version the device accepts.
/// The grid of the CTS tests `async_copy_*3D` (skipped there for the same reason as
/// the 2D ones): the same element sizes, 10 elements per line, 13 lines per plane,
/// line margins of 0 and 10 elements and plane margins of 0 and 100 elements on each
/// side, 3 planes (or as many as 48 KiB of local memory holds).
#[test]
fn copies_3d_over_the_cts_grid() {
    let ctx = DeviceContext::new();
    if !extension(&ctx) {
        return;
    }
    let program = ctx.build(SRC, "");
    for elem in [1, 2, 3, 4, 5, 6, 7, 8, 13, 16, 32, 47, 64] {
        for (src_lm, dst_lm, src_pm, dst_pm) in [
            (0, 0, 0, 0),
            (10, 0, 0, 100),
            (0, 10, 100, 0),
            (10, 10, 100, 100),
        ] {
            let (src_line, dst_line) = (10 + src_lm, 10 + dst_lm);
            let (src_plane, dst_plane) = (13 * src_line + src_pm, 13 * dst_line + dst_pm);
            let planes = (48 * 1024 / (elem * src_plane.max(dst_plane))).min(3);
            let s = Shape {
                elem,
                per_line: 10,
                lines: 13,
                planes,
                src_off: 0,
                src_line,
                src_plane,
                dst_off: 0,
                dst_line,
                dst_plane,
            };
            check_both_directions(&ctx, &program, s, true);
        }
    }
}

#[test]
fn copies_work_in_every_opencl_c_version() {
    let ctx = DeviceContext::new();
    if !extension(&ctx) {
        return;
    }
    let s = Shape {
        elem: 4,
        per_line: 3,
        lines: 2,
        planes: 2,
        src_off: 1,
        src_line: 5,
        src_plane: 11,
        dst_off: 2,
        dst_line: 4,
        dst_plane: 9,
    };
    for std in ["CL1.0", "CL1.1", "CL1.2", "CL3.0"] {
        let program = ctx.build(SRC, &format!("-cl-std={std}"));
        check_both_directions(&ctx, &program, s, true);
        let flat = Shape {
            planes: 1,
            src_plane: 0,
            dst_plane: 0,
            ..s
        };
        check_both_directions(&ctx, &program, flat, false);
    }
}

/// Two copies chained on one event (the second returns the first's event), waited for
/// once; then the local tile goes back out with a 2D copy into a wider pitch.
#[test]
fn copies_share_an_event_and_one_wait_completes_both() {
    let ctx = DeviceContext::new();
    if !extension(&ctx) {
        return;
    }
    let src = r#"
kernel void k(global const float* a, global const float* b, global float* out,
              local float* tile) {
    // tile = 8 columns: a's 4x4 block on the left, b's on the right.
    size_t g = get_group_id(0);
    event_t e = async_work_group_copy_2D2D(tile, 0, a, g * 16, sizeof(float), 4, 4, 4, 8, 0);
    e = async_work_group_copy_2D2D(tile, 4, b, g * 16, sizeof(float), 4, 4, 4, 8, e);
    wait_group_events(1, &e);
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t l = get_local_id(0);
    tile[l] *= 2.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    e = async_work_group_copy_2D2D(out, g * 40, tile, 0, sizeof(float), 8, 4, 8, 10, 0);
    wait_group_events(1, &e);
}
"#;
    let groups = 3;
    let a: Vec<f32> = (0..16 * groups).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..16 * groups).map(|i| -(i as f32) - 0.5).collect();
    let out = ctx.buffer_from(&vec![7.0f32; 40 * groups]);
    let (a_buf, b_buf) = (ctx.buffer_from(&a), ctx.buffer_from(&b));
    let k = ctx.kernel(src, "", "k");
    k.arg_buffer(0, &a_buf)
        .arg_buffer(1, &b_buf)
        .arg_buffer(2, &out)
        .arg_local(3, 32 * 4);
    ctx.run(&k, &[32 * groups], Some(&[32]));
    let got: Vec<f32> = ctx.read(&out, 40 * groups);
    let mut want = vec![7.0f32; 40 * groups];
    for g in 0..groups {
        for r in 0..4 {
            for c in 0..8 {
                let v = if c < 4 {
                    a[g * 16 + r * 4 + c]
                } else {
                    b[g * 16 + r * 4 + c - 4]
                };
                want[g * 40 + r * 10 + c] = 2.0 * v;
            }
        }
    }
    assert_eq!(got, want);
}

// ---- NonSemantic.Codeplay.GroupAsyncCopies ----

/// A kernel `k(global uint* in, global uint* out)` whose body (`body`, SPIR-V 1.6
/// assembly) may use %set, the types below, and the constants %c<N> (64-bit N).
fn module(body: &str) -> String {
    let consts: String = [0u32, 1, 2, 3, 4, 5, 6, 8, 10, 12, 24]
        .iter()
        .map(|n| format!("        %c{n} = OpConstant %ulong {n}\n"))
        .collect();
    format!(
        r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
       %set = OpExtInstImport "{SET}"
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k" %tile
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
{consts}      %event = OpTypeEvent
   %p_event = OpTypePointer Function %event
       %pg = OpTypePointer CrossWorkgroup %uint
      %arr = OpTypeArray %uint %c24
     %parr = OpTypePointer Workgroup %arr
       %pl = OpTypePointer Workgroup %uint
       %ft = OpTypeFunction %void %pg %pg
     %uint_2 = OpConstant %uint 2
  %no_event = OpConstantNull %event
       %tile = OpVariable %parr Workgroup
          %k = OpFunction %void None %ft
         %in = OpFunctionParameter %pg
        %out = OpFunctionParameter %pg
      %entry = OpLabel
         %ev = OpVariable %p_event Function
         %t0 = OpBitcast %pl %tile
{body}
               OpReturn
               OpFunctionEnd
"#
    )
}

/// 4 lines of 4 uints from `in` (pitch 5, from element 1) into the tile (pitch 6,
/// from element 2); the tile's 2 planes of 2 lines of 3 uints (3D) out to `out`.
const COPIES: &str = r#"
         %e1 = OpExtInst %event %set 1 %t0 %c2 %in %c1 %c4 %c4 %c4 %c5 %c6 %no_event
               OpStore %ev %e1
               OpGroupWaitEvents %uint_2 %uint_2 %ev
         %e2 = OpExtInst %event %set 2 %out %c0 %t0 %c2 %c4 %c3 %c2 %c2 %c6 %c12 %c4 %c10 %no_event
               OpStore %ev %e2
               OpGroupWaitEvents %uint_2 %uint_2 %ev
"#;

fn spirv_set_reported(ctx: &DeviceContext) -> bool {
    let Ok(bytes) = device_info_bytes(ctx.device, CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR)
    else {
        return false;
    };
    from_bytes::<usize>(&bytes).into_iter().any(|p| {
        // SAFETY: the driver returns pointers to NUL-terminated strings that live as
        // long as the process.
        let name = unsafe { std::ffi::CStr::from_ptr(p as *const std::ffi::c_char) };
        name.to_str() == Ok(SET)
    })
}

#[test]
fn codeplay_group_async_copies_run_and_match_the_host() {
    let ctx = DeviceContext::new();
    if !require(ctx.supports_spirv(), "SPIR-V programs") || !extension(&ctx) {
        return;
    }
    assert!(
        spirv_set_reported(&ctx),
        "{SET} missing from the SPIR-V queries"
    );
    let Some(il) = spirv::assemble_for_test(&module(COPIES), "spv1.6") else {
        return;
    };
    let program = ctx.try_build_il(&il, "").unwrap_or_else(|f| panic!("{f}"));
    let input: Vec<u32> = (0..32).map(|i| 1000 + i).collect();
    for local in [1usize, 5, 16] {
        let out = ctx.buffer_from(&[u32::MAX; 40]);
        let in_buf = ctx.buffer_from(&input);
        let k = program.kernel("k");
        k.arg_buffer(0, &in_buf).arg_buffer(1, &out);
        ctx.run(&k, &[local], Some(&[local]));
        let got: Vec<u32> = ctx.read(&out, 40);
        // The tile (24 uints; only what the first copy wrote is read back).
        let mut tile = [None::<u32>; 24];
        for line in 0..4 {
            for x in 0..4 {
                tile[2 + line * 6 + x] = Some(input[1 + line * 5 + x]);
            }
        }
        let mut want = vec![u32::MAX; 40];
        for plane in 0..2 {
            for line in 0..2 {
                for x in 0..3 {
                    let s = 2 + plane * 12 + line * 6 + x;
                    let d = plane * 10 + line * 4 + x;
                    want[d] = tile[s].expect("the 3D copy reads only what the 2D copy wrote");
                }
            }
        }
        assert_eq!(got, want, "local size {local}");
    }
}

/// The other directions, and an Event operand: a 3D copy from `in` into the tile and
/// a 2D one chained on its event (one wait for both), then a 2D copy of the tile out.
const CHAINED: &str = r#"
         %e1 = OpExtInst %event %set 2 %t0 %c0 %in %c0 %c4 %c2 %c2 %c2 %c3 %c8 %c2 %c4 %no_event
         %e2 = OpExtInst %event %set 1 %t0 %c12 %in %c10 %c4 %c3 %c2 %c4 %c5 %e1
               OpStore %ev %e2
               OpGroupWaitEvents %uint_2 %uint_2 %ev
         %e3 = OpExtInst %event %set 1 %out %c1 %t0 %c0 %c4 %c10 %c2 %c10 %c12 %no_event
               OpStore %ev %e3
               OpGroupWaitEvents %uint_2 %uint_2 %ev
"#;

#[test]
fn codeplay_group_async_copies_chain_on_an_event() {
    let ctx = DeviceContext::new();
    if !require(ctx.supports_spirv(), "SPIR-V programs") || !extension(&ctx) {
        return;
    }
    let Some(il) = spirv::assemble_for_test(&module(CHAINED), "spv1.6") else {
        return;
    };
    let program = ctx.try_build_il(&il, "").unwrap_or_else(|f| panic!("{f}"));
    let input: Vec<u32> = (0..32).map(|i| 2000 + i).collect();
    let mut tile = [None::<u32>; 24];
    for plane in 0..2 {
        for line in 0..2 {
            for x in 0..2 {
                tile[plane * 4 + line * 2 + x] = Some(input[plane * 8 + line * 3 + x]);
            }
        }
    }
    for line in 0..2 {
        for x in 0..3 {
            tile[12 + line * 5 + x] = Some(input[10 + line * 4 + x]);
        }
    }
    for local in [1usize, 6, 16] {
        let out = ctx.buffer_from(&[u32::MAX; 40]);
        let in_buf = ctx.buffer_from(&input);
        let k = program.kernel("k");
        k.arg_buffer(0, &in_buf).arg_buffer(1, &out);
        ctx.run(&k, &[2 * local], Some(&[local]));
        let got: Vec<u32> = ctx.read(&out, 40);
        for (d, &g) in got.iter().enumerate() {
            let src = (d >= 1 && (d - 1) % 12 < 10 && (d - 1) / 12 < 2)
                .then(|| ((d - 1) / 12) * 10 + (d - 1) % 12);
            match src {
                // Tile elements no copy wrote are undefined: not compared.
                Some(t) => {
                    if let Some(want) = tile[t] {
                        assert_eq!(g, want, "out[{d}] (tile[{t}]), local size {local}");
                    }
                }
                None => assert_eq!(
                    g,
                    u32::MAX,
                    "out[{d}] is outside the copy, local size {local}"
                ),
            }
        }
    }
}

/// Misuses of the set, each with a text its build log must contain.
const MISUSES: [(&str, &str); 9] = [
    (
        "%e = OpExtInst %event %set 1 %t0 %c2 %in %c1 %c4 %c4 %c3 %c5 %c6",
        "takes 10 operands after its result, not 9",
    ),
    (
        "%e = OpExtInst %event %set 2 %t0 %c2 %in %c1 %c4 %c4 %c3 %c5 %c6 %no_event",
        "GroupAsyncCopy3D3D takes 13 operands",
    ),
    (
        "%e = OpExtInst %event %set 1 %t0 %uint_2 %in %c1 %c4 %c4 %c3 %c5 %c6 %no_event",
        "must be a 64-bit integer",
    ),
    (
        "%e = OpExtInst %event %set 1 %out %c2 %in %c1 %c4 %c4 %c3 %c5 %c6 %no_event",
        "between Workgroup and CrossWorkgroup pointers",
    ),
    (
        "%e = OpExtInst %ulong %set 1 %t0 %c2 %in %c1 %c4 %c4 %c3 %c5 %c6 %no_event",
        "the result of GroupAsyncCopy2D2D must be an event",
    ),
    (
        "%e = OpExtInst %event %set 1 %t0 %c2 %in %c1 %c4 %c4 %c3 %c5 %c6 %c0",
        "must be an event",
    ),
    (
        "%e = OpExtInst %event %set 1 %c0 %c2 %in %c1 %c4 %c4 %c3 %c5 %c6 %no_event",
        "not a pointer",
    ),
    (
        "%e = OpExtInst %event %set 3 %t0 %c2 %in %c1 %c4 %c4 %c3 %c5 %c6 %no_event",
        "unknown NonSemantic.Codeplay.GroupAsyncCopies instruction 3",
    ),
    // an id that is not a value
    (
        "%e = OpExtInst %event %set 1 %t0 %c2 %in %c1 %c4 %c4 %c3 %c5 %ft %no_event",
        "is not a value",
    ),
];

/// Misuses of the set: clCreateProgramWithIL refuses them with CL_INVALID_VALUE (or
/// the build fails with a log), and the driver keeps working.
#[test]
fn codeplay_group_async_copies_misuse_is_refused() {
    let ctx = DeviceContext::new();
    if !require(ctx.supports_spirv(), "SPIR-V programs") || !extension(&ctx) {
        return;
    }
    for (inst, why) in MISUSES {
        let Some(il) = spirv::assemble_for_test(&module(inst), "spv1.6") else {
            return;
        };
        match ctx.try_build_il(&il, "") {
            Ok(_) => panic!("accepted:\n{inst}"),
            // A malformed module is refused at once; an instruction the set does not
            // have is unsupported, refused by the build with a log.
            Err(f) if f.code == CL_INVALID_VALUE => {}
            Err(f) => assert!(
                f.code == CL_BUILD_PROGRAM_FAILURE && f.log.contains(why),
                "{inst}: {f}"
            ),
        }
    }
    // Still usable.
    let Some(il) = spirv::assemble_for_test(&module(COPIES), "spv1.6") else {
        return;
    };
    assert!(ctx.try_build_il(&il, "").is_ok());
}

/// The same words arriving as a cranecl program binary: the build fails with a log
/// naming the rule broken.
#[test]
fn a_binary_with_a_misused_copy_fails_to_build_with_a_log() {
    if !testing_cranecl() {
        return;
    }
    let ctx = DeviceContext::new();
    for (inst, why) in MISUSES {
        let Some(il) = spirv::assemble_for_test(&module(inst), "spv1.6") else {
            return;
        };
        let program = ctx
            .try_program_from_binary(&cranecl_binary(&il))
            .unwrap_or_else(|e| panic!("{e}"));
        let f = ctx
            .try_build_program(program, "")
            .err()
            .unwrap_or_else(|| panic!("{inst}: built"));
        assert_eq!(f.code, CL_BUILD_PROGRAM_FAILURE, "{inst}");
        let log = f.log;
        assert!(log.contains(why), "{inst}: log {log:?} lacks {why:?}");
    }
}
