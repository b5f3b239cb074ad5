//! A kernel too big to compile (issue 7: a huge kernel builds or fails with
//! `CL_OUT_OF_RESOURCES` and a build log, never aborts the process): the jit's size
//! estimate refuses it before lowering, so the build fails at once instead of taking
//! gigabytes, and the application keeps running with a usable context.

use std::fmt::Write as _;

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

/// `float16` loads through a per-work-item address: per-lane code each (16 leaves),
/// some 7 million estimated machine instructions at the smallest width (the limit is
/// 6 million).
const LOADS: usize = 12_000;

/// Loads of the kernel with a required sub-group size of 32: fewer instructions than
/// the limit, but a stack frame of tens of megabytes at that width (it used to
/// compile for half a minute, then fail on the frame).
const WIDE_LOADS: usize = 1600;

/// A kernel summing `loads` loads `in[ix[gid] + i]` of `float16` into `out[gid]`,
/// as SPIR-V assembly (no clang: the module is built in a fraction of a second),
/// with a required sub-group size when `sub_group_size` is given.
fn source(loads: usize, sub_group_size: Option<u32>) -> String {
    let mut s = String::from(
        "OpCapability Addresses\nOpCapability Kernel\nOpCapability Int64\n\
         OpCapability Vector16\n",
    );
    if sub_group_size.is_some() {
        s.push_str("OpCapability SubgroupDispatch\n");
    }
    s.push_str(
        "OpMemoryModel Physical64 OpenCL\n\
         OpEntryPoint Kernel %k \"k\" %gid_var\n",
    );
    if let Some(w) = sub_group_size {
        let _ = writeln!(s, "OpExecutionMode %k SubgroupSize {w}");
    }
    s.push_str(
        "OpDecorate %gid_var BuiltIn GlobalInvocationId\nOpDecorate %gid_var Constant\n\
         %void = OpTypeVoid\n%ulong = OpTypeInt 64 0\n%uint = OpTypeInt 32 0\n\
         %float = OpTypeFloat 32\n%v16f = OpTypeVector %float 16\n\
         %v3ul = OpTypeVector %ulong 3\n%pv16f = OpTypePointer CrossWorkgroup %v16f\n\
         %pui = OpTypePointer CrossWorkgroup %uint\n%pin3ul = OpTypePointer Input %v3ul\n\
         %gid_var = OpVariable %pin3ul Input\n%ft = OpTypeFunction %void %pv16f %pv16f %pui\n",
    );
    for i in 0..loads {
        let _ = writeln!(s, "%c{i} = OpConstant %ulong {i}");
    }
    s.push_str(
        "%k = OpFunction %void None %ft\n%in = OpFunctionParameter %pv16f\n\
         %out = OpFunctionParameter %pv16f\n%ix = OpFunctionParameter %pui\n\
         %entry = OpLabel\n%g3 = OpLoad %v3ul %gid_var Aligned 32\n\
         %gid = OpCompositeExtract %ulong %g3 0\n\
         %ixp = OpInBoundsPtrAccessChain %pui %ix %gid\n%xi = OpLoad %uint %ixp Aligned 4\n\
         %x = OpUConvert %ulong %xi\n",
    );
    for i in 0..loads {
        let _ = writeln!(
            s,
            "%a{i} = OpIAdd %ulong %x %c{i}\n%p{i} = OpInBoundsPtrAccessChain %pv16f %in %a{i}\n\
             %l{i} = OpLoad %v16f %p{i} Aligned 64"
        );
        if i == 0 {
            let _ = writeln!(s, "%s0 = OpCopyObject %v16f %l0");
        } else {
            let _ = writeln!(s, "%s{i} = OpFAdd %v16f %s{} %l{i}", i - 1);
        }
    }
    let _ = writeln!(
        s,
        "%op = OpInBoundsPtrAccessChain %pv16f %out %gid\nOpStore %op %s{} Aligned 64\n\
         OpReturn\nOpFunctionEnd",
        loads - 1
    );
    s
}

/// Build failure `f` is the refusal of a kernel too large to compile:
/// `CL_OUT_OF_RESOURCES`, a log that says so and names `what` is too big, and a
/// context still usable afterwards.
fn refused(f: &BuildFailure, what: &str, ctx: &DeviceContext) {
    assert_eq!(
        f.code,
        CL_OUT_OF_RESOURCES,
        "{} ({})",
        error_name(f.code),
        f.log
    );
    assert!(
        f.log.contains("too large to compile") && f.log.contains(what),
        "{}",
        f.log
    );
    still_usable(ctx);
}

/// The process and the context are still usable after a refused build.
fn still_usable(ctx: &DeviceContext) {
    let program = ctx.build("kernel void k(global int* o) { o[0] = 7; }", "");
    let kernel = program.kernel("k");
    let out = ctx.buffer_zeroed::<i32>(1);
    kernel.arg_buffer(0, &out);
    ctx.run(&kernel, &[1], None);
    assert_eq!(ctx.read::<i32>(&out, 1), vec![7]);
}

#[test]
fn a_kernel_too_big_to_compile_fails_with_out_of_resources_and_a_log() {
    // Other implementations may well build it: the limit is ours.
    if !testing_cranecl() {
        return;
    }
    let ctx = DeviceContext::new();
    if !require(ctx.supports_spirv(), "SPIR-V programs") {
        return;
    }
    let Some(il) = spirv::assemble_for_test(&source(LOADS, None), "spv1.0") else {
        return;
    };
    let f = ctx
        .try_build_il(&il, "")
        .expect_err("a kernel of some 7 million machine instructions built");
    refused(&f, "million", &ctx);
}

/// A kernel whose required sub-group size makes it too big (its stack frame) is
/// refused by the estimate too, at once rather than after half a minute of
/// compiling; should it ever build, it must compute the sums right.
#[test]
fn a_wide_kernel_too_big_for_its_frame_fails_at_once_or_computes_right() {
    if !testing_cranecl() {
        return;
    }
    let ctx = DeviceContext::new();
    if !require(ctx.supports_spirv(), "SPIR-V programs") {
        return;
    }
    let Some(il) = spirv::assemble_for_test(&source(WIDE_LOADS, Some(32)), "spv1.1") else {
        return;
    };
    let program = match ctx.try_build_il(&il, "") {
        Ok(p) => p,
        Err(f) => {
            refused(&f, "stack frame", &ctx);
            return;
        }
    };
    // Built: 32 work-items, each summing WIDE_LOADS float16 from its own start.
    const ITEMS: usize = 32;
    let ix: Vec<u32> = (0..ITEMS as u32).map(|g| (g * 7) % 13).collect();
    let vecs = 13 + WIDE_LOADS;
    let input: Vec<f32> = (0..vecs * 16).map(|i| (i % 5) as f32).collect();
    let a = ctx.buffer_from(&input);
    let o = ctx.buffer_zeroed::<f32>(ITEMS * 16);
    let xb = ctx.buffer_from(&ix);
    let kernel = program.kernel("k");
    kernel
        .arg_buffer(0, &a)
        .arg_buffer(1, &o)
        .arg_buffer(2, &xb);
    ctx.run(&kernel, &[ITEMS], Some(&[ITEMS]));
    let got = ctx.read::<f32>(&o, ITEMS * 16);
    for (g, x) in ix.iter().enumerate() {
        for c in 0..16 {
            let want: f32 = (0..WIDE_LOADS)
                .map(|i| input[(*x as usize + i) * 16 + c])
                .sum();
            assert_eq!(got[g * 16 + c], want, "item {g} component {c}");
        }
    }
}
