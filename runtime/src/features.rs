//! The one list of what the device claims: extensions and OpenCL C features.
//!
//! Device queries (`CL_DEVICE_EXTENSIONS`, `CL_DEVICE_OPENCL_C_FEATURES`, ...) and the
//! clang command line (`-cl-ext=`) are both generated from here, so what clang accepts
//! and what the device reports cannot drift apart. Only list what really works.

/// `(name, version)` of every supported extension (version as CL_MAKE_VERSION parts).
pub const EXTENSIONS: &[(&str, (u32, u32, u32))] = &[
    ("cl_khr_icd", (2, 0, 0)),
    ("cl_khr_byte_addressable_store", (1, 0, 0)),
    ("cl_khr_global_int32_base_atomics", (1, 0, 0)),
    ("cl_khr_global_int32_extended_atomics", (1, 0, 0)),
    ("cl_khr_local_int32_base_atomics", (1, 0, 0)),
    ("cl_khr_local_int32_extended_atomics", (1, 0, 0)),
    ("cl_khr_fp64", (1, 0, 0)),
    ("cl_khr_il_program", (1, 0, 0)),
    // SPIR-V extensions whose instructions and decorations the jit implements.
    ("cl_khr_spirv_no_integer_wrap_decoration", (1, 0, 0)),
    ("cl_khr_expect_assume", (1, 0, 0)),
    ("cl_khr_subgroups", (1, 0, 0)),
    ("cl_intel_subgroups", (1, 0, 0)),
    ("cl_intel_required_subgroup_size", (1, 0, 0)),
    ("cl_khr_suggested_local_work_size", (1, 0, 0)),
    ("cl_intel_unified_shared_memory", (1, 0, 0)),
];

/// `(name, version)` of every OpenCL C 3.0 optional feature the compiler supports.
pub const OPENCL_C_FEATURES: &[(&str, (u32, u32, u32))] = &[
    ("__opencl_c_int64", (3, 0, 0)),
    ("__opencl_c_fp64", (3, 0, 0)),
    ("__opencl_c_subgroups", (3, 0, 0)),
    ("__opencl_c_work_group_collective_functions", (3, 0, 0)),
];

/// The OpenCL C versions the front end accepts (`CL_DEVICE_OPENCL_C_ALL_VERSIONS`).
pub const OPENCL_C_VERSIONS: &[(u32, u32, u32)] = &[(1, 0, 0), (1, 1, 0), (1, 2, 0), (3, 0, 0)];

/// SPIR-V versions accepted by clCreateProgramWithIL (`CL_DEVICE_ILS_WITH_VERSION`).
pub const SPIRV_VERSIONS: &[(u32, u32)] = &[(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (1, 6)];

/// Extensions of the host API only: clang has no such name.
const HOST_API_ONLY: &[&str] = &[
    "cl_khr_icd",
    "cl_khr_il_program",
    "cl_khr_spirv_no_integer_wrap_decoration",
    "cl_khr_suggested_local_work_size",
    "cl_intel_unified_shared_memory",
];

/// The `-cl-ext=` argument for clang: every extension and feature above enabled.
/// (Not `-all` first: opencl-c.h then fails on its image declarations; features we do
/// not list stay at clang's default and kernels using them fail in the jit with a
/// message naming the capability.)
pub fn clang_cl_ext_arg() -> String {
    let names = EXTENSIONS
        .iter()
        .map(|(n, _)| *n)
        .chain(OPENCL_C_FEATURES.iter().map(|(n, _)| *n))
        .filter(|n| !HOST_API_ONLY.contains(n));
    let mut arg = String::from("-cl-ext=");
    let list: Vec<String> = names.map(|n| format!("+{n}")).collect();
    arg.push_str(&list.join(","));
    arg
}
