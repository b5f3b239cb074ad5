//! The OpenCL C predefined macros against what the device reports: every
//! `__opencl_c_*` feature macro is defined exactly when CL_DEVICE_OPENCL_C_FEATURES
//! lists it, every extension macro exactly when CL_DEVICE_EXTENSIONS does,
//! `__IMAGE_SUPPORT__` exactly with CL_DEVICE_IMAGE_SUPPORT, the version and endian
//! macros carry the device's values, and the queries coupled to a feature
//! (atomic capabilities, generic address space, pipes, program-scope globals) agree
//! with the feature list.

use cranecl_conformance::consts::*;
use cranecl_conformance::sys::*;
use cranecl_conformance::*;

/// Every OpenCL C 3.0 optional feature macro (OpenCL C 3.0 §6.2.1 and the
/// extension features clang knows).
const FEATURE_MACROS: &[&str] = &[
    "__opencl_c_3d_image_writes",
    "__opencl_c_atomic_order_acq_rel",
    "__opencl_c_atomic_order_seq_cst",
    "__opencl_c_atomic_scope_device",
    "__opencl_c_atomic_scope_all_devices",
    "__opencl_c_device_enqueue",
    "__opencl_c_generic_address_space",
    "__opencl_c_fp64",
    "__opencl_c_images",
    "__opencl_c_int64",
    "__opencl_c_pipes",
    "__opencl_c_program_scope_global_variables",
    "__opencl_c_read_write_images",
    "__opencl_c_subgroups",
    "__opencl_c_work_group_collective_functions",
    "__opencl_c_integer_dot_product_input_4x8bit",
    "__opencl_c_integer_dot_product_input_4x8bit_packed",
    "__opencl_c_kernel_clock_scope_device",
    "__opencl_c_ext_fp32_global_atomic_add",
    "__opencl_c_ext_fp32_local_atomic_add",
    "__opencl_c_ext_fp32_global_atomic_min_max",
    "__opencl_c_ext_fp32_local_atomic_min_max",
    "__opencl_c_ext_fp64_global_atomic_add",
    "__opencl_c_ext_fp64_local_atomic_add",
    "__opencl_c_ext_fp64_global_atomic_min_max",
    "__opencl_c_ext_fp64_local_atomic_min_max",
    "__opencl_c_ext_fp16_global_atomic_load_store",
    "__opencl_c_ext_fp16_local_atomic_load_store",
    "__opencl_c_ext_fp16_global_atomic_add",
    "__opencl_c_ext_fp16_local_atomic_add",
    "__opencl_c_ext_fp16_global_atomic_min_max",
    "__opencl_c_ext_fp16_local_atomic_min_max",
    "__opencl_c_ext_image_raw10_raw12",
];

/// Extensions with an OpenCL C macro (those clang defines for SPIR-V by default, and
/// the ones the device reports).
const EXTENSION_MACROS: &[&str] = &[
    "cl_intel_subgroup_2d_block_io",
    "cl_khr_byte_addressable_store",
    "cl_khr_fp16",
    "cl_khr_fp64",
    "cl_khr_global_int32_base_atomics",
    "cl_khr_global_int32_extended_atomics",
    "cl_khr_local_int32_base_atomics",
    "cl_khr_local_int32_extended_atomics",
    "cl_khr_int64_base_atomics",
    "cl_khr_int64_extended_atomics",
    "cl_khr_3d_image_writes",
    "cl_khr_depth_images",
    "cl_khr_gl_msaa_sharing",
    "cl_khr_mipmap_image",
    "cl_khr_mipmap_image_writes",
    "cl_khr_srgb_image_writes",
    "cl_khr_subgroups",
    "cl_khr_subgroup_extended_types",
    "cl_khr_subgroup_non_uniform_vote",
    "cl_khr_subgroup_ballot",
    "cl_khr_subgroup_non_uniform_arithmetic",
    "cl_khr_subgroup_shuffle",
    "cl_khr_subgroup_shuffle_relative",
    "cl_khr_subgroup_clustered_reduce",
    "cl_khr_subgroup_rotate",
    "cl_khr_extended_bit_ops",
    "cl_khr_integer_dot_product",
    "cl_khr_extended_async_copies",
    "cl_khr_kernel_clock",
    "cl_ext_float_atomics",
    "cl_intel_subgroups",
    "cl_intel_required_subgroup_size",
    "cl_intel_subgroups_short",
    "cl_intel_subgroups_char",
    "cl_intel_subgroups_long",
    "cl_intel_subgroup_local_block_io",
];

/// Which of `names` are defined when building with `options` (one program, one
/// kernel writing 1 or 0 per name).
fn defined(ctx: &DeviceContext, names: &[&str], options: &str) -> Vec<bool> {
    let mut src = String::from("kernel void k(global int* o) {\n");
    for (i, name) in names.iter().enumerate() {
        src.push_str(&format!(
            "#ifdef {name}\n o[{i}] = 1;\n#else\n o[{i}] = 0;\n#endif\n"
        ));
    }
    src.push('}');
    let program = ctx.build(&src, options);
    let kernel = program.kernel("k");
    let out = ctx.buffer_zeroed::<i32>(names.len());
    kernel.arg_buffer(0, &out);
    ctx.run(&kernel, &[1], None);
    ctx.read::<i32>(&out, names.len())
        .iter()
        .map(|v| *v == 1)
        .collect()
}

/// The values of integer-valued macros with `options`.
fn values(ctx: &DeviceContext, exprs: &[&str], options: &str) -> Vec<i64> {
    let mut src = String::from("kernel void k(global long* o) {\n");
    for (i, e) in exprs.iter().enumerate() {
        src.push_str(&format!(" o[{i}] = (long)({e});\n"));
    }
    src.push('}');
    let program = ctx.build(&src, options);
    let kernel = program.kernel("k");
    let out = ctx.buffer_zeroed::<i64>(exprs.len());
    kernel.arg_buffer(0, &out);
    ctx.run(&kernel, &[1], None);
    ctx.read(&out, exprs.len())
}

fn feature_names(ctx: &DeviceContext) -> Vec<String> {
    name_versions(&device_info_bytes(ctx.device, CL_DEVICE_OPENCL_C_FEATURES).unwrap())
}

/// The names of a `cl_name_version` array.
fn name_versions(bytes: &[u8]) -> Vec<String> {
    bytes
        .chunks_exact(4 + 64)
        .map(|c| {
            let name = &c[4..];
            let end = name.iter().position(|b| *b == 0).unwrap_or(name.len());
            String::from_utf8_lossy(&name[..end]).into_owned()
        })
        .collect()
}

#[test]
fn feature_macros_match_the_device_features() {
    let ctx = DeviceContext::new();
    let features = feature_names(&ctx);
    for f in &features {
        assert!(
            FEATURE_MACROS.contains(&f.as_str()),
            "{f} missing from this test's list"
        );
    }
    for options in std_options(&ctx) {
        let got = defined(&ctx, FEATURE_MACROS, options);
        for (name, is_defined) in FEATURE_MACROS.iter().zip(got) {
            assert_eq!(
                is_defined,
                features.iter().any(|f| f == name),
                "{name} with {options}: macro defined = {is_defined}, CL_DEVICE_OPENCL_C_FEATURES = {features:?}"
            );
        }
    }
}

/// `-cl-std=CL3.0`, and `-cl-std=CL3.1` when the device lists OpenCL C 3.1: the
/// versions whose feature macros follow `CL_DEVICE_OPENCL_C_FEATURES`.
fn std_options(ctx: &DeviceContext) -> Vec<&'static str> {
    if testing_cranecl() {
        assert!(ctx.supports_opencl_c(3, 1), "cranecl claims OpenCL C 3.1");
    }
    let mut all = vec!["-cl-std=CL3.0"];
    if ctx.supports_opencl_c(3, 1) {
        all.push("-cl-std=CL3.1");
    }
    all
}

#[test]
fn extension_macros_match_the_device_extensions() {
    let ctx = DeviceContext::new();
    let extensions = device_info_string(ctx.device, CL_DEVICE_EXTENSIONS).unwrap();
    let reported: Vec<&str> = extensions.split_whitespace().collect();
    for options in std_options(&ctx) {
        let got = defined(&ctx, EXTENSION_MACROS, options);
        for (name, is_defined) in EXTENSION_MACROS.iter().zip(got) {
            assert_eq!(
                is_defined,
                reported.contains(name),
                "{name} with {options}: macro defined = {is_defined}, CL_DEVICE_EXTENSIONS = {extensions}"
            );
        }
    }
    // OpenCL C 1.x: clang defines some extension macros (cl_khr_subgroups) only for
    // 2.0 and later, but never one the device does not report.
    for options in ["", "-cl-std=CL1.2"] {
        let got = defined(&ctx, EXTENSION_MACROS, options);
        for (name, is_defined) in EXTENSION_MACROS.iter().zip(got) {
            assert!(
                !is_defined || reported.contains(name),
                "{name} defined with {options:?}, CL_DEVICE_EXTENSIONS = {extensions}"
            );
        }
    }
    // Each reported extension that has an OpenCL C side is in the list above, so
    // the check covers it.
    for name in reported {
        let api_only = [
            "cl_khr_icd",
            "cl_khr_il_program",
            "cl_khr_suggested_local_work_size",
            "cl_intel_unified_shared_memory",
            "cl_khr_spirv_linkonce_odr",
            "cl_khr_spirv_no_integer_wrap_decoration",
            "cl_khr_expect_assume",
            "cl_khr_device_uuid",
            "cl_khr_spirv_queries",
        ];
        assert!(
            api_only.contains(&name) || EXTENSION_MACROS.contains(&name),
            "{name} missing from this test's list"
        );
    }
}

#[test]
fn image_support_macro_follows_the_device() {
    let ctx = DeviceContext::new();
    let images: cl_bool = device_info(ctx.device, CL_DEVICE_IMAGE_SUPPORT).unwrap();
    for options in ["", "-cl-std=CL1.2", "-cl-std=CL3.0", "-cl-std=CL3.1"] {
        if options == "-cl-std=CL3.1" && !ctx.supports_opencl_c(3, 1) {
            continue;
        }
        assert_eq!(
            defined(&ctx, &["__IMAGE_SUPPORT__"], options),
            vec![images != 0],
            "{options:?}"
        );
    }
}

#[test]
fn version_and_target_macros() {
    let ctx = DeviceContext::new();
    let version = device_info_string(ctx.device, CL_DEVICE_VERSION).unwrap();
    // "OpenCL <major>.<minor> ..." -> major * 100 + minor * 10
    let number = version.split_whitespace().nth(1).unwrap();
    let (major, minor) = number.split_once('.').unwrap();
    let device_version = major.parse::<i64>().unwrap() * 100 + minor.parse::<i64>().unwrap() * 10;
    let exprs = [
        "__OPENCL_VERSION__",
        "__OPENCL_C_VERSION__",
        "CL_VERSION_1_0",
        "CL_VERSION_1_1",
        "CL_VERSION_1_2",
        "CL_VERSION_2_0",
        "CL_VERSION_3_0",
        "__ENDIAN_LITTLE__",
    ];
    let little: cl_bool = device_info(ctx.device, CL_DEVICE_ENDIAN_LITTLE).unwrap();
    assert_eq!(little, 1, "the host is little-endian");
    for (options, c_version) in [
        ("-cl-std=CL1.2", 120),
        ("-cl-std=CL3.0", 300),
        ("-cl-std=CL1.1", 110),
    ] {
        assert_eq!(
            values(&ctx, &exprs, options),
            vec![device_version, c_version, 100, 110, 120, 200, 300, 1],
            "{options}"
        );
    }
    // OpenCL C 3.1: __OPENCL_C_VERSION__ and CL_VERSION_3_1 are 310.
    if ctx.supports_opencl_c(3, 1) {
        let mut exprs = exprs.to_vec();
        exprs.push("CL_VERSION_3_1");
        assert_eq!(
            values(&ctx, &exprs, "-cl-std=CL3.1"),
            vec![device_version, 310, 100, 110, 120, 200, 300, 1, 310]
        );
    }
    if testing_cranecl() {
        assert_eq!(device_version, 310, "CL_DEVICE_VERSION {version:?}");
        // As clang does for the older version macros, CL_VERSION_3_1 is defined in
        // every version, so `__OPENCL_C_VERSION__ >= CL_VERSION_3_1` is false in 3.0.
        for options in ["-cl-std=CL3.0", "-cl-std=CL1.2", ""] {
            assert_eq!(
                values(
                    &ctx,
                    &["CL_VERSION_3_1", "__OPENCL_C_VERSION__ >= CL_VERSION_3_1"],
                    options
                ),
                vec![310, 0],
                "{options:?}"
            );
        }
    }
    // Defined only with the option that sets it; never for a full-profile device.
    let names = [
        "__FAST_RELAXED_MATH__",
        "__EMBEDDED_PROFILE__",
        "__ROUNDING_MODE__",
    ];
    assert_eq!(defined(&ctx, &names, ""), vec![false, false, false]);
    assert_eq!(
        defined(&ctx, &names, "-cl-fast-relaxed-math"),
        vec![true, false, false]
    );
    // FP_FAST_FMA (double) implies FP_FAST_FMAF; both need fused multiply-add.
    let fma = defined(&ctx, &["FP_FAST_FMAF", "FP_FAST_FMA"], "");
    assert!(fma[0] || !fma[1], "{fma:?}");
    // __kernel_exec(X, type) is __kernel with work-group size and vector type hints.
    let src = "__kernel_exec(8, float4) void k(global int* o) { o[get_global_id(0)] = 5; }";
    let program = ctx.build(src, "");
    let kernel = program.kernel("k");
    let out = ctx.buffer_zeroed::<i32>(8);
    kernel.arg_buffer(0, &out);
    ctx.run(&kernel, &[8], None);
    assert_eq!(ctx.read::<i32>(&out, 8), vec![5; 8]);
}

#[test]
fn coupled_queries_agree_with_the_features() {
    let ctx = DeviceContext::new();
    let features = feature_names(&ctx);
    let has = |name: &str| features.iter().any(|f| f == name);
    let atomics: cl_bitfield =
        device_info(ctx.device, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES).unwrap();
    for (bit, feature) in [
        (
            opencl_sys::CL_DEVICE_ATOMIC_ORDER_ACQ_REL,
            "__opencl_c_atomic_order_acq_rel",
        ),
        (
            opencl_sys::CL_DEVICE_ATOMIC_ORDER_SEQ_CST,
            "__opencl_c_atomic_order_seq_cst",
        ),
        (
            opencl_sys::CL_DEVICE_ATOMIC_SCOPE_DEVICE,
            "__opencl_c_atomic_scope_device",
        ),
        (
            opencl_sys::CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES,
            "__opencl_c_atomic_scope_all_devices",
        ),
    ] {
        assert_eq!(atomics & bit != 0, has(feature), "{feature}");
    }
    let minimum =
        opencl_sys::CL_DEVICE_ATOMIC_ORDER_RELAXED | opencl_sys::CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP;
    assert_eq!(atomics & minimum, minimum);
    let generic: cl_bool =
        device_info(ctx.device, CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT).unwrap();
    assert_eq!(generic != 0, has("__opencl_c_generic_address_space"));
    let pipes: cl_bool = device_info(ctx.device, CL_DEVICE_PIPE_SUPPORT).unwrap();
    assert_eq!(pipes != 0, has("__opencl_c_pipes"));
    let globals: usize =
        device_info(ctx.device, opencl_sys::CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE).unwrap();
    assert_eq!(
        globals > 0,
        has("__opencl_c_program_scope_global_variables")
    );
    let images: cl_bool = device_info(ctx.device, CL_DEVICE_IMAGE_SUPPORT).unwrap();
    assert_eq!(images != 0, has("__opencl_c_images"));
    let collectives: cl_bool = device_info(
        ctx.device,
        CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT,
    )
    .unwrap();
    assert_eq!(
        collectives != 0,
        has("__opencl_c_work_group_collective_functions")
    );
    let double: cl_bitfield = device_info(ctx.device, CL_DEVICE_DOUBLE_FP_CONFIG).unwrap();
    assert_eq!(double != 0, has("__opencl_c_fp64"));
    assert!(
        has("__opencl_c_int64"),
        "a full-profile device has 64-bit integers"
    );
}
