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
    spirv::assemble_for_test(MISTYPED, "spv1.0")
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
    let program = ctx.try_program_from_binary(&cranecl_binary(&il)).unwrap();
    let f = ctx
        .try_build_program(program, "")
        .expect_err("the mistyped module built");
    assert_eq!(f.code, CL_BUILD_PROGRAM_FAILURE);
    let log = f.log;
    assert!(log.contains("OpIAdd") && log.contains("float32"), "{log}");
}

/// cl_khr_spirv_queries (cl_ext.h).
const CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR: cl_uint = 0x12B9;
const CL_DEVICE_SPIRV_EXTENSIONS_KHR: cl_uint = 0x12BA;
const CL_DEVICE_SPIRV_CAPABILITIES_KHR: cl_uint = 0x12BB;

/// `(value, name, extension its declaration needs)` of the capabilities a device may
/// report here; a reported value outside this table fails the test below.
const KNOWN_CAPABILITIES: &[(u32, &str, Option<&str>)] = &[
    (4, "Addresses", None),
    (17, "Pipes", None),
    (5, "Linkage", None),
    (6, "Kernel", None),
    (7, "Vector16", None),
    (8, "Float16Buffer", None),
    (9, "Float16", None),
    (10, "Float64", None),
    (11, "Int64", None),
    (12, "Int64Atomics", None),
    (18, "Groups", None),
    (19, "DeviceEnqueue", None),
    (22, "Int16", None),
    (38, "GenericPointer", None),
    (39, "Int8", None),
    (58, "SubgroupDispatch", None),
    (61, "GroupNonUniform", None),
    (62, "GroupNonUniformVote", None),
    (63, "GroupNonUniformArithmetic", None),
    (64, "GroupNonUniformBallot", None),
    (65, "GroupNonUniformShuffle", None),
    (66, "GroupNonUniformShuffleRelative", None),
    (67, "GroupNonUniformClustered", None),
    (
        6026,
        "GroupNonUniformRotateKHR",
        Some("SPV_KHR_subgroup_rotate"),
    ),
    (71, "UniformDecoration", None),
    (5568, "SubgroupShuffleINTEL", Some("SPV_INTEL_subgroups")),
    (
        5569,
        "SubgroupBufferBlockIOINTEL",
        Some("SPV_INTEL_subgroups"),
    ),
    // Subgroup2DBlock{IO,Transform,Transpose}INTEL, as raw words: the spirv-as of
    // SPIRV-Tools 2023 does not know their names.
    (6228, "!6228", Some("SPV_INTEL_2d_block_io")),
    (6229, "!6229", Some("SPV_INTEL_2d_block_io")),
    (6230, "!6230", Some("SPV_INTEL_2d_block_io")),
    (
        5612,
        "AtomicFloat32MinMaxEXT",
        Some("SPV_EXT_shader_atomic_float_min_max"),
    ),
    (
        5613,
        "AtomicFloat64MinMaxEXT",
        Some("SPV_EXT_shader_atomic_float_min_max"),
    ),
    (5629, "ExpectAssumeKHR", Some("SPV_KHR_expect_assume")),
    // Core in SPIR-V 1.6 (the modules below), SPV_KHR_integer_dot_product before.
    (6017, "DotProductInput4x8Bit", None),
    (6018, "DotProductInput4x8BitPacked", None),
    (6019, "DotProduct", None),
    (6025, "BitInstructions", Some("SPV_KHR_bit_instructions")),
    (
        6033,
        "AtomicFloat32AddEXT",
        Some("SPV_EXT_shader_atomic_float_add"),
    ),
    (
        6034,
        "AtomicFloat64AddEXT",
        Some("SPV_EXT_shader_atomic_float_add"),
    ),
];

/// A kernel storing 7, in a module declaring `capability` (and `extension`).
fn module_declaring(capability: Option<&str>, extension: Option<&str>) -> String {
    let mut text = String::from("OpCapability Addresses\nOpCapability Kernel\n");
    if let Some(c) = capability {
        text += &format!("OpCapability {c}\n");
    }
    if let Some(e) = extension {
        text += &format!("OpExtension \"{e}\"\n");
    }
    text + r#"
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
         %pu = OpTypePointer CrossWorkgroup %uint
     %uint_7 = OpConstant %uint 7
         %ft = OpTypeFunction %void %pu
          %k = OpFunction %void None %ft
          %o = OpFunctionParameter %pu
      %entry = OpLabel
               OpStore %o %uint_7
               OpReturn
               OpFunctionEnd
"#
}

/// Builds `text` (SPIR-V 1.6 assembly) and runs its kernel: `Ok` when it stored 7,
/// the error code of clCreateProgramWithIL or the build otherwise.
fn build_and_run(ctx: &DeviceContext, text: &str) -> Result<(), cl_int> {
    let il = spirv::assemble(text, "spv1.6").unwrap_or_else(|e| panic!("{e}\n{text}"));
    let program = ctx.try_program_from_il(&il).map_err(|e| e.code)?;
    // SAFETY: a valid program and its one device.
    let code = unsafe {
        clBuildProgram(
            program.raw(),
            1,
            &ctx.device,
            c"".as_ptr(),
            None,
            ptr::null_mut(),
        )
    };
    if code != CL_SUCCESS {
        return Err(code);
    }
    let kernel = program.kernel("k");
    let out = ctx.buffer_zeroed::<u32>(1);
    kernel.arg_buffer(0, &out);
    ctx.run(&kernel, &[1], None);
    assert_eq!(ctx.read::<u32>(&out, 1), vec![7]);
    Ok(())
}

/// The SPIR-V queries list what a module may declare: every reported capability and
/// extension is accepted in a module that runs, the environment's required ones are
/// there, and what the device does not claim (device enqueue) is refused.
#[test]
fn spirv_queries_list_what_modules_may_declare() {
    let ctx = DeviceContext::new();
    if !require(
        ctx.has_extension("cl_khr_spirv_queries"),
        "cl_khr_spirv_queries",
    ) || !require(
        spirv::assemble("OpCapability Kernel", "spv1.0").is_ok(),
        "spirv-as",
    ) {
        return;
    }
    let strings = |param| -> Vec<String> {
        let bytes = device_info_bytes(ctx.device, param).expect("string list query");
        from_bytes::<usize>(&bytes)
            .into_iter()
            // SAFETY: the driver returns pointers to NUL-terminated strings that live
            // as long as the process.
            .map(|p| unsafe { std::ffi::CStr::from_ptr(p as *const std::ffi::c_char) })
            .map(|c| c.to_str().expect("ASCII name").to_string())
            .collect()
    };
    let sets = strings(CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR);
    assert!(sets.contains(&"OpenCL.std".to_string()), "{sets:?}");
    let extensions = strings(CL_DEVICE_SPIRV_EXTENSIONS_KHR);
    let caps: Vec<u32> =
        from_bytes(&device_info_bytes(ctx.device, CL_DEVICE_SPIRV_CAPABILITIES_KHR).expect("caps"));
    // Required of every OpenCL 3.0 full-profile device with SPIR-V.
    for required in [4, 5, 6, 7, 8, 11, 22, 39] {
        assert!(
            caps.contains(&required),
            "capability {required} missing: {caps:?}"
        );
    }
    if ctx.has_extension("cl_khr_fp64") {
        assert!(caps.contains(&10), "Float64 with cl_khr_fp64");
    }
    if ctx.has_extension("cl_khr_expect_assume") {
        assert!(extensions.contains(&"SPV_KHR_expect_assume".to_string()));
        assert!(caps.contains(&5629));
    }
    if ctx.has_extension("cl_khr_integer_dot_product") {
        assert!(extensions.contains(&"SPV_KHR_integer_dot_product".to_string()));
        assert!(caps.contains(&6019) && caps.contains(&6018), "{caps:?}");
    }
    if ctx.has_extension("cl_khr_extended_bit_ops") {
        assert!(extensions.contains(&"SPV_KHR_bit_instructions".to_string()));
        assert!(caps.contains(&6025), "{caps:?}");
    }
    let pipes: cl_bool = device_info(
        ctx.device,
        cranecl_conformance::consts::CL_DEVICE_PIPE_SUPPORT,
    )
    .unwrap();
    assert_eq!(
        caps.contains(&17),
        pipes != 0,
        "Pipes exactly with pipe support"
    );
    // CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES.
    let enqueue: cl_ulong = device_info(ctx.device, 0x1070).unwrap();
    assert_eq!(
        caps.contains(&19),
        enqueue != 0,
        "DeviceEnqueue exactly with device-side enqueue"
    );
    for cap in &caps {
        let (_, name, ext) = KNOWN_CAPABILITIES
            .iter()
            .find(|(v, _, _)| v == cap)
            .unwrap_or_else(|| panic!("capability {cap} reported but not known to this test"));
        if let Some(ext) = ext {
            assert!(
                extensions.contains(&ext.to_string()),
                "{name} needs {ext} reported"
            );
        }
        assert_eq!(
            build_and_run(&ctx, &module_declaring(Some(name), *ext)),
            Ok(()),
            "reported capability {name}"
        );
    }
    for ext in &extensions {
        assert_eq!(
            build_and_run(&ctx, &module_declaring(None, Some(ext))),
            Ok(()),
            "reported extension {ext}"
        );
    }
    for (name, value) in [("Pipes", 17), ("NamedBarrier", 59)] {
        if !caps.contains(&value) {
            let refused = build_and_run(&ctx, &module_declaring(Some(name), None));
            assert!(refused.is_err(), "{name} is not reported but was accepted");
        }
    }
    // The pointers stay the same between queries (the application may keep them).
    let again = device_info_bytes(ctx.device, CL_DEVICE_SPIRV_EXTENSIONS_KHR).expect("again");
    assert_eq!(
        again,
        device_info_bytes(ctx.device, CL_DEVICE_SPIRV_EXTENSIONS_KHR).expect("third")
    );
}
