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

/// A kernel summing `LOADS` loads `in[ix[gid] + i]` of `float16` into `out[gid]`,
/// as SPIR-V assembly (no clang: the module is built in a fraction of a second).
fn source() -> String {
    let mut s = String::from(
        "OpCapability Addresses\nOpCapability Kernel\nOpCapability Int64\n\
         OpCapability Vector16\nOpMemoryModel Physical64 OpenCL\n\
         OpEntryPoint Kernel %k \"k\" %gid_var\n\
         OpDecorate %gid_var BuiltIn GlobalInvocationId\nOpDecorate %gid_var Constant\n\
         %void = OpTypeVoid\n%ulong = OpTypeInt 64 0\n%uint = OpTypeInt 32 0\n\
         %float = OpTypeFloat 32\n%v16f = OpTypeVector %float 16\n\
         %v3ul = OpTypeVector %ulong 3\n%pv16f = OpTypePointer CrossWorkgroup %v16f\n\
         %pui = OpTypePointer CrossWorkgroup %uint\n%pin3ul = OpTypePointer Input %v3ul\n\
         %gid_var = OpVariable %pin3ul Input\n%ft = OpTypeFunction %void %pv16f %pv16f %pui\n",
    );
    for i in 0..LOADS {
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
    for i in 0..LOADS {
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
        LOADS - 1
    );
    s
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
    let il = match spirv::assemble(&source(), "spv1.0") {
        Ok(b) => b,
        Err(e) if e.contains("running spirv-as") => {
            eprintln!("skipped: spirv-as (spirv-tools) is not installed");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let f = ctx
        .try_build_il(&il, "")
        .expect_err("a kernel of some 7 million machine instructions built");
    assert_eq!(
        f.code,
        CL_OUT_OF_RESOURCES,
        "{} ({})",
        error_name(f.code),
        f.log
    );
    assert!(
        f.log.contains("too large to compile") && f.log.contains("million"),
        "{}",
        f.log
    );
    // The process and the context are still usable.
    let program = ctx.build("kernel void k(global int* o) { o[0] = 7; }", "");
    let kernel = program.kernel("k");
    let out = ctx.buffer_zeroed::<i32>(1);
    kernel.arg_buffer(0, &out);
    ctx.run(&kernel, &[1], None);
    assert_eq!(ctx.read::<i32>(&out, 1), vec![7]);
}
