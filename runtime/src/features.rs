//! The one list of what the device claims: extensions and OpenCL C features.
//!
//! Device queries (`CL_DEVICE_EXTENSIONS`, `CL_DEVICE_OPENCL_C_FEATURES`, and the
//! queries coupled to a feature such as `CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES` or
//! `CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT`) and the clang command line (`-cl-ext=`,
//! `__IMAGE_SUPPORT__`) are all generated from here, so what the compiler defines and
//! what the device reports cannot drift apart. Only list what really works: adding a
//! name here is what turns it on everywhere.

use opencl_sys::*;

/// `(name, version)` of every supported extension (version as CL_MAKE_VERSION parts).
pub const EXTENSIONS: &[(&str, (u32, u32, u32))] = &[
    ("cl_khr_icd", (2, 0, 0)),
    ("cl_khr_byte_addressable_store", (1, 0, 0)),
    ("cl_khr_global_int32_base_atomics", (1, 0, 0)),
    ("cl_khr_global_int32_extended_atomics", (1, 0, 0)),
    ("cl_khr_local_int32_base_atomics", (1, 0, 0)),
    ("cl_khr_local_int32_extended_atomics", (1, 0, 0)),
    ("cl_khr_int64_base_atomics", (1, 0, 0)),
    ("cl_khr_int64_extended_atomics", (1, 0, 0)),
    // float/double atomic add, min, max (compare-and-swap loops; min/max with fmin
    // semantics), on global, local and generic pointers; the language side is the
    // __opencl_c_ext_fp* features below.
    ("cl_ext_float_atomics", (1, 0, 0)),
    ("cl_khr_fp64", (1, 0, 0)),
    ("cl_khr_fp16", (1, 0, 0)),
    ("cl_khr_il_program", (1, 0, 0)),
    // SPIR-V extensions whose instructions and decorations the jit implements.
    ("cl_khr_spirv_no_integer_wrap_decoration", (1, 0, 0)),
    ("cl_khr_expect_assume", (1, 0, 0)),
    ("cl_khr_subgroups", (1, 0, 0)),
    ("cl_intel_subgroups", (1, 0, 0)),
    ("cl_intel_required_subgroup_size", (1, 0, 0)),
    // 2D block reads (plain, transform, transpose), writes and prefetches: every
    // function of the extension's tables and the SPV_INTEL_2d_block_io instructions
    // (`jit/src/lower/block2d.rs`, `jit/src/block2d.rs`).
    ("cl_intel_subgroup_2d_block_io", (1, 1, 0)),
    // The cl_khr_subgroup_* family: SPIR-V GroupNonUniform* lane operations on the
    // active lanes (jit/src/lower/group_khr.rs), the short/char/long Intel forms.
    ("cl_khr_subgroup_extended_types", (1, 0, 0)),
    ("cl_khr_subgroup_non_uniform_vote", (1, 0, 0)),
    ("cl_khr_subgroup_ballot", (1, 0, 0)),
    ("cl_khr_subgroup_non_uniform_arithmetic", (1, 0, 0)),
    ("cl_khr_subgroup_shuffle", (1, 0, 0)),
    ("cl_khr_subgroup_shuffle_relative", (1, 0, 0)),
    ("cl_khr_subgroup_clustered_reduce", (1, 0, 0)),
    ("cl_khr_subgroup_rotate", (1, 0, 0)),
    ("cl_intel_subgroups_short", (1, 0, 0)),
    ("cl_intel_subgroups_char", (1, 0, 0)),
    ("cl_intel_subgroups_long", (1, 0, 0)),
    // Intel block reads/writes on __local pointers (same lowering as __global).
    ("cl_intel_subgroup_local_block_io", (1, 0, 0)),
    ("cl_khr_suggested_local_work_size", (1, 0, 0)),
    ("cl_intel_unified_shared_memory", (1, 0, 0)),
    ("cl_khr_spirv_linkonce_odr", (1, 0, 0)),
    ("cl_khr_device_uuid", (1, 0, 0)),
    // CL_DEVICE_SPIRV_{EXTENDED_INSTRUCTION_SETS,EXTENSIONS,CAPABILITIES}_KHR, from
    // the jit's own lists (see `spirv_capabilities`).
    ("cl_khr_spirv_queries", (1, 0, 0)),
    // bitfield_insert/extract, bit_reverse (SPV_KHR_bit_instructions).
    ("cl_khr_extended_bit_ops", (1, 0, 0)),
    // dot/dot_acc_sat on char4/uchar4 and packed 4x8-bit (SPV_KHR_integer_dot_product).
    ("cl_khr_integer_dot_product", (2, 0, 0)),
    // async_work_group_copy_2D2D/3D3D (declared by build/cranecl.h) and the
    // NonSemantic.Codeplay.GroupAsyncCopies SPIR-V instructions: one synchronous copy
    // per work-group (jit lower/async_copy.rs).
    ("cl_khr_extended_async_copies", (1, 0, 0)),
    // (cl_khr_async_work_group_copy_fence is implemented but not reported: the CTS
    // compiler suite's list of approved Khronos extensions lacks it and fails a device
    // that reports it; neither Intel's CPU runtime nor PoCL reports it. cranecl.h
    // declares the built-in all the same.)
];

/// Device-side enqueue, claimed unless `CRANECL_DEVICE_ENQUEUE=0` (see
/// [`device_enqueue_enabled`]).
pub const DEVICE_ENQUEUE_FEATURE: (&str, (u32, u32, u32)) =
    ("__opencl_c_device_enqueue", (3, 0, 0));

/// Whether device-side enqueue is claimed: OpenCL C source is built through LLVM IR
/// (`build::device_enqueue`), SPIR-V's `OpEnqueueKernel` family is lowered by the jit
/// (`lower::enqueue_spirv`), both run by `runtime::device_enqueue`. The opt-out
/// `CRANECL_DEVICE_ENQUEUE=0` (read once per process) turns the feature, on-device
/// queues and the `DeviceEnqueue` SPIR-V capability off.
pub fn device_enqueue_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("CRANECL_DEVICE_ENQUEUE").is_none_or(|v| v != "0"))
}

/// Every OpenCL C 3.0 optional feature the device claims: [`OPENCL_C_FEATURES`] and,
/// when enabled, [`DEVICE_ENQUEUE_FEATURE`].
pub fn opencl_c_features() -> Vec<(&'static str, (u32, u32, u32))> {
    let mut all = OPENCL_C_FEATURES.to_vec();
    if device_enqueue_enabled() {
        all.push(DEVICE_ENQUEUE_FEATURE);
    }
    all
}

/// `(name, version)` of every OpenCL C 3.0 optional feature the compiler supports
/// (device-side enqueue apart: [`opencl_c_features`]).
pub const OPENCL_C_FEATURES: &[(&str, (u32, u32, u32))] = &[
    ("__opencl_c_int64", (3, 0, 0)),
    ("__opencl_c_fp64", (3, 0, 0)),
    ("__opencl_c_subgroups", (3, 0, 0)),
    ("__opencl_c_work_group_collective_functions", (3, 0, 0)),
    // Every atomic is a locked (sequentially consistent) x86-64 instruction on memory
    // all work-items, the host and other kernels see coherently (on __local memory,
    // which only the work-group's one thread reaches, a plain read-modify-write), so
    // every order and every scope holds.
    ("__opencl_c_atomic_order_acq_rel", (3, 0, 0)),
    ("__opencl_c_atomic_order_seq_cst", (3, 0, 0)),
    ("__opencl_c_atomic_scope_device", (3, 0, 0)),
    ("__opencl_c_atomic_scope_all_devices", (3, 0, 0)),
    // Pointers are plain addresses; to_global/to_local/to_private and get_fence test
    // the address against the work-group's __local block and the private area.
    ("__opencl_c_generic_address_space", (3, 0, 0)),
    // Laid out per compiled program (jit::program_data), kept between launches.
    ("__opencl_c_program_scope_global_variables", (3, 0, 0)),
    // Pipe objects (runtime memory.rs) over a lock-free ring (jit pipe.rs); every pipe
    // built-in, work-group and sub-group reservations included (jit lower/pipe.rs).
    ("__opencl_c_pipes", (3, 0, 0)),
    // cl_ext_float_atomics (no half: cl_khr_fp16 atomics are not implemented).
    ("__opencl_c_ext_fp32_global_atomic_add", (1, 0, 0)),
    ("__opencl_c_ext_fp32_local_atomic_add", (1, 0, 0)),
    ("__opencl_c_ext_fp32_global_atomic_min_max", (1, 0, 0)),
    ("__opencl_c_ext_fp32_local_atomic_min_max", (1, 0, 0)),
    ("__opencl_c_ext_fp64_global_atomic_add", (1, 0, 0)),
    ("__opencl_c_ext_fp64_local_atomic_add", (1, 0, 0)),
    ("__opencl_c_ext_fp64_global_atomic_min_max", (1, 0, 0)),
    ("__opencl_c_ext_fp64_local_atomic_min_max", (1, 0, 0)),
    // cl_khr_integer_dot_product.
    ("__opencl_c_integer_dot_product_input_4x8bit", (2, 0, 0)),
    (
        "__opencl_c_integer_dot_product_input_4x8bit_packed",
        (2, 0, 0),
    ),
];

/// The OpenCL C versions the front end accepts (`CL_DEVICE_OPENCL_C_ALL_VERSIONS`).
/// OpenCL C 3.1 is compiled by clang as 3.0 with the 3.1 version macros
/// (`build::options::ClStd::clang_args`): the language differs from 3.0 only in
/// what is always available (the built-ins of six extensions this device reports
/// anyway) and in printf's `z`/`t` length modifiers (`jit::printf`).
pub const OPENCL_C_VERSIONS: &[(u32, u32, u32)] =
    &[(1, 0, 0), (1, 1, 0), (1, 2, 0), (3, 0, 0), (3, 1, 0)];

/// SPIR-V versions accepted by clCreateProgramWithIL (`CL_DEVICE_ILS_WITH_VERSION`).
pub const SPIRV_VERSIONS: &[(u32, u32)] = &[(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (1, 6)];

/// Extensions without an OpenCL C macro (the CTS's API-only list): clang has no such
/// name, or (cl_khr_expect_assume) the language side is clang's `__builtin_expect`
/// and `__builtin_assume`, always there.
const HOST_API_ONLY: &[&str] = &[
    "cl_khr_icd",
    "cl_khr_il_program",
    "cl_khr_spirv_no_integer_wrap_decoration",
    "cl_khr_expect_assume",
    "cl_khr_suggested_local_work_size",
    "cl_intel_unified_shared_memory",
    "cl_khr_spirv_linkonce_odr",
    "cl_khr_device_uuid",
    "cl_khr_spirv_queries",
];

/// Language extensions clang-22 does not know: `-cl-ext` cannot turn them on (or
/// defines no macro for them), so their macro is defined with `-D` (and
/// `build/cranecl.h` declares their built-ins under it).
const CLANG_UNKNOWN: &[&str] = &[
    "cl_khr_extended_async_copies",
    "cl_intel_subgroup_2d_block_io",
];

/// Extensions whose `#pragma OPENCL EXTENSION` clang-22 honours (in every OpenCL C
/// version the device accepts). Every other reported extension's pragma is one clang
/// ignores with a warning, so the build removes it ([`quiet_pragma`]).
const CLANG_PRAGMA: &[&str] = &[
    "cl_khr_byte_addressable_store",
    "cl_khr_global_int32_base_atomics",
    "cl_khr_global_int32_extended_atomics",
    "cl_khr_local_int32_base_atomics",
    "cl_khr_local_int32_extended_atomics",
    "cl_khr_int64_base_atomics",
    "cl_khr_int64_extended_atomics",
    "cl_khr_fp16",
    "cl_khr_fp64",
    "cl_intel_subgroups",
    "cl_intel_subgroups_char",
    "cl_intel_subgroups_short",
    "cl_intel_subgroups_long",
];

/// Whether `#pragma OPENCL EXTENSION name : enable|disable` is taken out of the source
/// before clang reads it: `name` is reported and clang-22 would only warn about it
/// (unknown to clang, known without a pragma, or `cl_khr_subgroups` before OpenCL C
/// 2.0).
pub fn quiet_pragma(name: &str) -> bool {
    has_extension(name) && !CLANG_PRAGMA.contains(&name)
}

/// Whether the device reports the OpenCL C feature `name` (`__opencl_c_...`).
pub fn has_feature(name: &str) -> bool {
    opencl_c_features().iter().any(|(n, _)| *n == name)
}

/// Whether the device reports the extension `name`.
pub fn has_extension(name: &str) -> bool {
    EXTENSIONS.iter().any(|(n, _)| *n == name)
}

/// `CL_DEVICE_IMAGE_SUPPORT`, and whether clang defines `__IMAGE_SUPPORT__`.
pub fn image_support() -> bool {
    has_feature("__opencl_c_images")
}

/// `CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT`.
pub fn generic_address_space() -> bool {
    has_feature("__opencl_c_generic_address_space")
}

/// `CL_DEVICE_PIPE_SUPPORT`.
pub fn pipe_support() -> bool {
    has_feature("__opencl_c_pipes")
}

/// `CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE` (and the preferred total size): the jit's
/// limit per variable with program-scope global variables; 0 without them.
pub fn max_global_variable_size() -> usize {
    if has_feature("__opencl_c_program_scope_global_variables") {
        cranecl_jit::MAX_GLOBAL_VARIABLE_SIZE
    } else {
        0
    }
}

/// `CL_DEVICE_SPIRV_CAPABILITIES_KHR`: the capabilities the jit implements, less
/// those whose OpenCL feature the device does not claim (so a module that declares
/// one of them is refused with a message, as it should be).
pub fn spirv_capabilities() -> Vec<u32> {
    use cranecl_jit::spirv::IMPLEMENTED_CAPABILITIES;
    let needs = |name: &str| -> bool {
        match name {
            "Float16" => has_extension("cl_khr_fp16"),
            "Float64" => has_feature("__opencl_c_fp64"),
            "Int64Atomics" => has_extension("cl_khr_int64_base_atomics"),
            "GenericPointer" => generic_address_space(),
            "Groups" => {
                has_feature("__opencl_c_subgroups")
                    || has_feature("__opencl_c_work_group_collective_functions")
            }
            "SubgroupDispatch" | "GroupNonUniform" => has_feature("__opencl_c_subgroups"),
            "Subgroup2DBlockIOINTEL"
            | "Subgroup2DBlockTransformINTEL"
            | "Subgroup2DBlockTransposeINTEL" => has_extension("cl_intel_subgroup_2d_block_io"),
            "SubgroupShuffleINTEL" | "SubgroupBufferBlockIOINTEL" => {
                has_extension("cl_intel_subgroups")
            }
            "ExpectAssumeKHR" => has_extension("cl_khr_expect_assume"),
            "BitInstructions" => has_extension("cl_khr_extended_bit_ops"),
            "DotProduct" => has_extension("cl_khr_integer_dot_product"),
            "DotProductInput4x8Bit" => has_feature("__opencl_c_integer_dot_product_input_4x8bit"),
            "DotProductInput4x8BitPacked" => {
                has_feature("__opencl_c_integer_dot_product_input_4x8bit_packed")
            }
            "AtomicFloat32AddEXT" => fp_atomic_capabilities("fp32") & FP_ATOMIC_ADD != 0,
            "AtomicFloat64AddEXT" => fp_atomic_capabilities("fp64") & FP_ATOMIC_ADD != 0,
            "AtomicFloat32MinMaxEXT" => fp_atomic_capabilities("fp32") & FP_ATOMIC_MIN_MAX != 0,
            "AtomicFloat64MinMaxEXT" => fp_atomic_capabilities("fp64") & FP_ATOMIC_MIN_MAX != 0,
            "GroupNonUniformVote" => has_extension("cl_khr_subgroup_non_uniform_vote"),
            "GroupNonUniformBallot" => has_extension("cl_khr_subgroup_ballot"),
            "GroupNonUniformArithmetic" => has_extension("cl_khr_subgroup_non_uniform_arithmetic"),
            "GroupNonUniformShuffle" => has_extension("cl_khr_subgroup_shuffle"),
            "GroupNonUniformShuffleRelative" => has_extension("cl_khr_subgroup_shuffle_relative"),
            "GroupNonUniformClustered" => has_extension("cl_khr_subgroup_clustered_reduce"),
            "GroupNonUniformRotateKHR" => has_extension("cl_khr_subgroup_rotate"),
            "Pipes" => pipe_support(),
            "DeviceEnqueue" => device_enqueue_enabled(),
            n if n.starts_with("GroupNonUniform") => has_feature("__opencl_c_subgroups"),
            _ => true,
        }
    };
    IMPLEMENTED_CAPABILITIES
        .iter()
        .filter(|c| needs(&format!("{c:?}")))
        .map(|c| *c as u32)
        .collect()
}

/// `CL_DEVICE_SPIRV_EXTENSIONS_KHR`: the SPIR-V extensions the jit implements, less
/// those tied to an OpenCL extension or feature the device does not claim.
pub fn spirv_extensions() -> Vec<&'static str> {
    cranecl_jit::spirv::IMPLEMENTED_EXTENSIONS
        .iter()
        .copied()
        .filter(|e| match *e {
            "SPV_INTEL_subgroups" => has_extension("cl_intel_subgroups"),
            "SPV_INTEL_2d_block_io" => has_extension("cl_intel_subgroup_2d_block_io"),
            "SPV_KHR_expect_assume" => has_extension("cl_khr_expect_assume"),
            "SPV_KHR_no_integer_wrap_decoration" => {
                has_extension("cl_khr_spirv_no_integer_wrap_decoration")
            }
            "SPV_KHR_linkonce_odr" => has_extension("cl_khr_spirv_linkonce_odr"),
            "SPV_KHR_subgroup_rotate" => has_extension("cl_khr_subgroup_rotate"),
            "SPV_KHR_bit_instructions" => has_extension("cl_khr_extended_bit_ops"),
            "SPV_KHR_integer_dot_product" => has_extension("cl_khr_integer_dot_product"),
            "SPV_EXT_shader_atomic_float_add" => {
                (fp_atomic_capabilities("fp32") | fp_atomic_capabilities("fp64")) & FP_ATOMIC_ADD
                    != 0
            }
            "SPV_EXT_shader_atomic_float_min_max" => {
                (fp_atomic_capabilities("fp32") | fp_atomic_capabilities("fp64"))
                    & FP_ATOMIC_MIN_MAX
                    != 0
            }
            _ => true,
        })
        .collect()
}

/// `CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR`: the sets the jit implements, less
/// those tied to an extension the device does not claim.
pub fn spirv_extended_instruction_sets() -> Vec<&'static str> {
    cranecl_jit::spirv::IMPLEMENTED_EXTENDED_INSTRUCTION_SETS
        .iter()
        .copied()
        .filter(|s| {
            *s != cranecl_jit::spirv::GROUP_ASYNC_COPIES_SET
                || has_extension("cl_khr_extended_async_copies")
        })
        .collect()
}

/// cl_ext_float_atomics add bits (global and local) of a capability mask.
const FP_ATOMIC_ADD: u64 = (1 << 1) | (1 << 17);
/// cl_ext_float_atomics min/max bits (global and local) of a capability mask.
const FP_ATOMIC_MIN_MAX: u64 = (1 << 2) | (1 << 18);

/// The order and scope bits that the atomic features add to the mandatory minimum.
fn atomic_feature_bits() -> cl_device_atomic_capabilities {
    [
        (
            "__opencl_c_atomic_order_acq_rel",
            CL_DEVICE_ATOMIC_ORDER_ACQ_REL,
        ),
        (
            "__opencl_c_atomic_order_seq_cst",
            CL_DEVICE_ATOMIC_ORDER_SEQ_CST,
        ),
        (
            "__opencl_c_atomic_scope_device",
            CL_DEVICE_ATOMIC_SCOPE_DEVICE,
        ),
        (
            "__opencl_c_atomic_scope_all_devices",
            CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES,
        ),
    ]
    .iter()
    .filter(|(name, _)| has_feature(name))
    .fold(0, |bits, (_, bit)| bits | bit)
}

/// `CL_DEVICE_{SINGLE,DOUBLE,HALF}_FP_ATOMIC_CAPABILITIES_EXT` for the floating-point
/// type spelled `prefix` in the feature names (`fp32`, `fp64`, `fp16`): load/store
/// (atomic_load/store/exchange of the type) with the extension and the type, add and
/// min/max per `__opencl_c_ext_<prefix>_{global,local}_atomic_{add,min_max}`.
pub fn fp_atomic_capabilities(prefix: &str) -> u64 {
    // cl_ext_float_atomics bit values (cl_ext.h).
    const GLOBAL_LOAD_STORE: u64 = 1 << 0;
    const GLOBAL_ADD: u64 = 1 << 1;
    const GLOBAL_MIN_MAX: u64 = 1 << 2;
    const LOCAL_LOAD_STORE: u64 = 1 << 16;
    const LOCAL_ADD: u64 = 1 << 17;
    const LOCAL_MIN_MAX: u64 = 1 << 18;
    let type_supported = match prefix {
        "fp32" => true,
        "fp64" => has_feature("__opencl_c_fp64"),
        _ => has_extension("cl_khr_fp16"),
    };
    if !has_extension("cl_ext_float_atomics") || !type_supported {
        return 0;
    }
    let mut caps = 0;
    for (space, load_store, add, min_max) in [
        ("global", GLOBAL_LOAD_STORE, GLOBAL_ADD, GLOBAL_MIN_MAX),
        ("local", LOCAL_LOAD_STORE, LOCAL_ADD, LOCAL_MIN_MAX),
    ] {
        let add_feature = format!("__opencl_c_ext_{prefix}_{space}_atomic_add");
        let min_max_feature = format!("__opencl_c_ext_{prefix}_{space}_atomic_min_max");
        if has_feature(&add_feature) {
            caps |= add;
        }
        if has_feature(&min_max_feature) {
            caps |= min_max;
        }
        // atomic_float/atomic_double load, store and exchange are core OpenCL C 2.0;
        // half ones need the fp16 load/store features.
        let load_store_feature = format!("__opencl_c_ext_{prefix}_{space}_atomic_load_store");
        if prefix != "fp16" || has_feature(&load_store_feature) {
            caps |= load_store;
        }
    }
    caps
}

/// `CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES`: relaxed, work-group scope (the OpenCL 3.0
/// minimum) plus what the atomic order/scope features claim.
pub fn atomic_memory_capabilities() -> cl_device_atomic_capabilities {
    CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP | atomic_feature_bits()
}

/// `CL_DEVICE_ATOMIC_FENCE_CAPABILITIES`: relaxed, acquire-release, work-group scope
/// (the minimum), work-item scope (a fence of one work-item's own accesses is a
/// compiler fence here), plus what the atomic order/scope features claim.
pub fn atomic_fence_capabilities() -> cl_device_atomic_capabilities {
    CL_DEVICE_ATOMIC_ORDER_RELAXED
        | CL_DEVICE_ATOMIC_ORDER_ACQ_REL
        | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP
        | CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM
        | atomic_feature_bits()
}

/// Whether `fma` runs as one instruction on this host (the jit targets the host ISA).
fn host_has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(target_arch = "aarch64")]
    {
        true
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// Macros of the OpenCL C 3.0 predefined set (6.12) that depend on the host:
/// `FP_FAST_FMAF` (and `FP_FAST_FMA` with fp64) when `fma` is as fast as a multiply
/// and an add, i.e. the CPU has fused multiply-add. As `-D` arguments.
pub fn host_macro_args() -> Vec<String> {
    let mut args = Vec::new();
    if host_has_fma() {
        args.push("-DFP_FAST_FMAF=1".to_string());
        if has_feature("__opencl_c_fp64") {
            args.push("-DFP_FAST_FMA=1".to_string());
        }
    }
    args
}

/// The clang arguments that set the language's extensions and features: `-cl-ext=`
/// with everything turned off and then exactly the names above turned on, so a macro
/// (`cl_khr_*`, `__opencl_c_*`) is defined if and only if the device reports it
/// (`-D` for the extensions clang does not know); and
/// `-U__IMAGE_SUPPORT__` (clang defines it for every SPIR-V target) without images.
pub fn clang_feature_args() -> Vec<String> {
    let names = EXTENSIONS
        .iter()
        .map(|(n, _)| *n)
        .chain(opencl_c_features().into_iter().map(|(n, _)| n))
        .filter(|n| !HOST_API_ONLY.contains(n));
    let (unknown, known): (Vec<&str>, Vec<&str>) = names.partition(|n| CLANG_UNKNOWN.contains(n));
    let list: Vec<String> = std::iter::once("-all".to_string())
        .chain(known.iter().map(|n| format!("+{n}")))
        .collect();
    let mut args = vec![format!("-cl-ext={}", list.join(","))];
    args.extend(unknown.iter().map(|n| format!("-D{n}=1")));
    if !image_support() {
        args.push("-U__IMAGE_SUPPORT__".into());
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clang_args_enable_exactly_the_list() {
        let args = clang_feature_args();
        let ext = args[0].strip_prefix("-cl-ext=").expect("-cl-ext first");
        let mut parts = ext.split(',');
        assert_eq!(parts.next(), Some("-all"), "everything off first");
        let on: Vec<&str> = parts.map(|p| p.strip_prefix('+').expect("+name")).collect();
        for (name, _) in opencl_c_features() {
            assert!(on.contains(&name), "{name}");
        }
        for (name, _) in EXTENSIONS {
            let language = !HOST_API_ONLY.contains(name);
            let unknown = CLANG_UNKNOWN.contains(name);
            assert_eq!(on.contains(name), language && !unknown, "{name}");
            assert_eq!(
                args.contains(&format!("-D{name}=1")),
                language && unknown,
                "{name}"
            );
        }
        assert_eq!(
            on.len(),
            opencl_c_features().len() + EXTENSIONS.len()
                - HOST_API_ONLY.len()
                - EXTENSIONS
                    .iter()
                    .filter(|(n, _)| CLANG_UNKNOWN.contains(n))
                    .count()
        );
        assert_eq!(
            args.contains(&"-U__IMAGE_SUPPORT__".to_string()),
            !image_support()
        );
    }

    #[test]
    fn coupled_queries_follow_the_features() {
        let mem = atomic_memory_capabilities();
        assert_eq!(
            mem & CL_DEVICE_ATOMIC_ORDER_SEQ_CST != 0,
            has_feature("__opencl_c_atomic_order_seq_cst")
        );
        assert_eq!(
            mem & CL_DEVICE_ATOMIC_SCOPE_DEVICE != 0,
            has_feature("__opencl_c_atomic_scope_device")
        );
        assert_ne!(mem & CL_DEVICE_ATOMIC_ORDER_RELAXED, 0);
        assert_ne!(
            atomic_fence_capabilities() & CL_DEVICE_ATOMIC_ORDER_ACQ_REL,
            0
        );
        assert_eq!(
            max_global_variable_size() > 0,
            has_feature("__opencl_c_program_scope_global_variables")
        );
        // OpenCL 3.0 couplings (the CTS checks them): device enqueue needs program-scope
        // globals and the generic address space; 3D image writes and read-write images
        // need images.
        if has_feature("__opencl_c_device_enqueue") {
            assert!(generic_address_space() && max_global_variable_size() > 0);
        }
        if has_feature("__opencl_c_3d_image_writes") || has_feature("__opencl_c_read_write_images")
        {
            assert!(image_support());
        }
        if has_feature("__opencl_c_fp64") {
            assert!(has_extension("cl_khr_fp64"));
        }
        // Float atomics: each capability bit follows its feature; half ones need fp16.
        for prefix in ["fp32", "fp64", "fp16"] {
            let caps = fp_atomic_capabilities(prefix);
            for (space, shift) in [("global", 0), ("local", 16)] {
                assert_eq!(
                    caps & (2 << shift) != 0,
                    has_feature(&format!("__opencl_c_ext_{prefix}_{space}_atomic_add")),
                    "{prefix} {space} add"
                );
                assert_eq!(
                    caps & (4 << shift) != 0,
                    has_feature(&format!("__opencl_c_ext_{prefix}_{space}_atomic_min_max")),
                    "{prefix} {space} min/max"
                );
            }
            if caps != 0 {
                assert!(has_extension("cl_ext_float_atomics"));
            }
        }
        if !has_extension("cl_khr_fp16") {
            assert_eq!(fp_atomic_capabilities("fp16"), 0);
        }
    }
}
