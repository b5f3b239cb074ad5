//! Malformed SPIR-V through the API: the validator's verdict becomes
//! `CL_INVALID_VALUE` from clCreateProgramWithIL, and `CL_BUILD_PROGRAM_FAILURE`
//! with a build log naming the instruction when the words arrive another way (a
//! program binary); the application keeps running.

use std::ptr;

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

/// A kernel adding a float to an int: assembles, but breaks the typing rules.
const MISTYPED: &str = r#"
               OpCapability Addresses
               OpCapability Kernel
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
         %pu = OpTypePointer CrossWorkgroup %uint
     %uint_1 = OpConstant %uint 1
    %float_1 = OpConstant %float 1
         %ft = OpTypeFunction %void %pu
          %k = OpFunction %void None %ft
          %o = OpFunctionParameter %pu
      %entry = OpLabel
        %sum = OpIAdd %uint %uint_1 %float_1
               OpStore %o %sum
               OpReturn
               OpFunctionEnd
"#;

fn mistyped() -> Option<Vec<u8>> {
    match spirv::assemble(MISTYPED, "spv1.0") {
        Ok(b) => Some(b),
        Err(e) if e.contains("running spirv-as") => {
            require(false, "spirv-as (spirv-tools)");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn create_with_il_refuses_a_mistyped_module() {
    let ctx = DeviceContext::new();
    if !require(ctx.supports_spirv(), "SPIR-V programs") {
        return;
    }
    let Some(il) = mistyped() else { return };
    let err = ctx.try_program_from_il(&il).expect_err("refused");
    assert_eq!(err.code, CL_INVALID_VALUE);
    // The context is still usable.
    let program = ctx.build("kernel void k(global int* o) { o[0] = 7; }", "");
    let kernel = program.kernel("k");
    let out = ctx.buffer_zeroed::<i32>(1);
    kernel.arg_buffer(0, &out);
    ctx.run(&kernel, &[1], None);
    assert_eq!(ctx.read::<i32>(&out, 1), vec![7]);
}

#[test]
fn a_binary_with_a_mistyped_module_fails_to_build_with_a_log() {
    if !testing_cranecl() {
        return;
    }
    let ctx = DeviceContext::new();
    let Some(il) = mistyped() else { return };
    // cranecl's binary format: magic, binary type, options length, word count,
    // options, the SPIR-V words.
    let mut bin = b"CRANECL\x02".to_vec();
    bin.extend_from_slice(&(CL_PROGRAM_BINARY_TYPE_EXECUTABLE as u32).to_le_bytes());
    bin.extend_from_slice(&0u32.to_le_bytes());
    bin.extend_from_slice(&((il.len() / 4) as u32).to_le_bytes());
    bin.extend_from_slice(&il);
    let mut status = 0;
    let mut err = 0;
    let len = bin.len();
    let ptr_bin = bin.as_ptr();
    // SAFETY: one device, one binary of `len` bytes.
    let program = unsafe {
        clCreateProgramWithBinary(
            ctx.context.raw(),
            1,
            &ctx.device,
            &len,
            &ptr_bin,
            &mut status,
            &mut err,
        )
    };
    check(err, "clCreateProgramWithBinary").unwrap();
    // SAFETY: creation succeeded; we own the reference.
    let program = unsafe { Program::from_raw(program) };
    // SAFETY: valid program, one device, no options, no callback.
    let code = unsafe {
        clBuildProgram(
            program.raw(),
            1,
            &ctx.device,
            ptr::null(),
            None,
            ptr::null_mut(),
        )
    };
    assert_eq!(code, CL_BUILD_PROGRAM_FAILURE);
    let log = ctx.build_log(&program);
    assert!(log.contains("OpIAdd") && log.contains("float32"), "{log}");
}
