//! `clSetProgramSpecializationConstant` through the ICD loader: values reach the
//! kernel at the next clBuildProgram, defaults apply without them, and every error
//! code the specification names comes back exactly.

use std::ffi::c_void;
use std::ptr;

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

// Not in cl-sys (OpenCL 2.2); ocl-icd exports it.
extern "C" {
    fn clSetProgramSpecializationConstant(
        program: cl_program,
        spec_id: cl_uint,
        spec_size: usize,
        spec_value: *const c_void,
    ) -> cl_int;
}

const CL_INVALID_SPEC_ID: cl_int = -71;

/// `out[0] = a + (flag ? 100 : 0)` with `a` = SpecId 7 (uint, default 5) and `flag`
/// = SpecId 9 (bool, default true), plus `out[1] = a * 3` folded by OpSpecConstantOp.
const MODULE: &str = r#"
               OpCapability Addresses
               OpCapability Kernel
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
               OpDecorate %a SpecId 7
               OpDecorate %flag SpecId 9
       %void = OpTypeVoid
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_3 = OpConstant %uint 3
   %uint_100 = OpConstant %uint 100
          %a = OpSpecConstant %uint 5
       %flag = OpSpecConstantTrue %bool
         %a3 = OpSpecConstantOp %uint IMul %a %uint_3
         %pu = OpTypePointer CrossWorkgroup %uint
         %ft = OpTypeFunction %void %pu
          %k = OpFunction %void None %ft
        %out = OpFunctionParameter %pu
      %entry = OpLabel
        %add = OpSelect %uint %flag %uint_100 %uint_0
        %sum = OpIAdd %uint %a %add
               OpStore %out %sum
         %o1 = OpInBoundsPtrAccessChain %pu %out %uint_1
               OpStore %o1 %a3
               OpReturn
               OpFunctionEnd
"#;

fn il() -> Option<Vec<u8>> {
    spirv::assemble_for_test(MODULE, "spv1.0")
}

fn set(program: cl_program, id: u32, bytes: &[u8]) -> cl_int {
    // SAFETY: `bytes` is valid for its length.
    unsafe { clSetProgramSpecializationConstant(program, id, bytes.len(), bytes.as_ptr().cast()) }
}

fn run(ctx: &DeviceContext, program: Program) -> [u32; 2] {
    let program = ctx
        .try_build_program(program, "")
        .unwrap_or_else(|f| panic!("{f}"));
    let kernel = program.kernel("k");
    let out = ctx.buffer_zeroed::<u32>(2);
    kernel.arg_buffer(0, &out);
    ctx.run(&kernel, &[1], None);
    let v = ctx.read::<u32>(&out, 2);
    [v[0], v[1]]
}

#[test]
fn values_apply_at_the_next_build() {
    let ctx = DeviceContext::new();
    if !require(ctx.supports_spirv(), "SPIR-V programs") {
        return;
    }
    let Some(il) = il() else { return };
    let program = ctx.try_program_from_il(&il).unwrap();
    assert_eq!(run(&ctx, program), [105, 15], "defaults");
    let program = ctx.try_program_from_il(&il).unwrap();
    assert_eq!(
        set(program.raw(), 7, &40u32.to_le_bytes()),
        CL_SUCCESS as cl_int
    );
    assert_eq!(set(program.raw(), 9, &[0]), CL_SUCCESS as cl_int);
    // The last value set wins.
    assert_eq!(
        set(program.raw(), 7, &41u32.to_le_bytes()),
        CL_SUCCESS as cl_int
    );
    assert_eq!(run(&ctx, program), [41, 123], "specialized");
}

#[test]
fn error_codes() {
    let ctx = DeviceContext::new();
    if !require(ctx.supports_spirv(), "SPIR-V programs") {
        return;
    }
    let Some(il) = il() else { return };
    let program = ctx.try_program_from_il(&il).unwrap();
    let p = program.raw();
    assert_eq!(
        set(p, 8, &1u32.to_le_bytes()),
        CL_INVALID_SPEC_ID,
        "unknown id"
    );
    assert_eq!(
        set(p, 7, &1u64.to_le_bytes()),
        CL_INVALID_VALUE,
        "size of a uint"
    );
    assert_eq!(
        set(p, 9, &1u32.to_le_bytes()),
        CL_INVALID_VALUE,
        "a bool takes 1 byte"
    );
    // SAFETY: a NULL value is what is tested.
    let null = unsafe { clSetProgramSpecializationConstant(p, 7, 4, ptr::null()) };
    assert_eq!(null, CL_INVALID_VALUE, "NULL value");
    let source = ctx
        .try_program_from_source("kernel void k(global int* o) { o[0] = 1; }")
        .unwrap();
    assert_eq!(
        set(source.raw(), 7, &1u32.to_le_bytes()),
        CL_INVALID_PROGRAM,
        "program from source"
    );
    assert_eq!(
        set(ptr::null_mut(), 7, &1u32.to_le_bytes()),
        CL_INVALID_PROGRAM,
        "NULL program"
    );
}
