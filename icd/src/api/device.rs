//! Device entry points: clGetDeviceIDs, clGetDeviceInfo (every query clinfo makes,
//! for the root device and its sub-devices), clCreateSubDevices and retain/release
//! (counted for sub-devices, no-ops on the root device).

use cranecl_jit::{DEFAULT_SUB_GROUP_WIDTH, SUPPORTED_SUB_GROUP_WIDTHS};
use cranecl_runtime::device_enqueue as de;
use cranecl_runtime::features;
use cranecl_runtime::memory as mem;
use cranecl_runtime::object::ApiObject;
use cranecl_runtime::partition::{self, Partition, MAX_COUNTS};
use cranecl_runtime::platform::{self as rt, Platform};

use super::platform::{check_platform, make_version, name_version, platform_handle};
use cranecl_runtime::platform::Device;

use super::prelude::*;

/// Whether a `cl_device_type` filter selects our CPU device (`CL_INVALID_DEVICE_TYPE`
/// for unknown bits).
pub fn type_matches(device_type: cl_device_type) -> CLResult<bool> {
    let known = CL_DEVICE_TYPE_DEFAULT
        | CL_DEVICE_TYPE_CPU
        | CL_DEVICE_TYPE_GPU
        | CL_DEVICE_TYPE_ACCELERATOR
        | CL_DEVICE_TYPE_CUSTOM;
    if device_type == CL_DEVICE_TYPE_ALL {
        return Ok(true);
    }
    if device_type == 0 || device_type & !known != 0 {
        return Err(CL_INVALID_DEVICE_TYPE);
    }
    Ok(device_type & (CL_DEVICE_TYPE_DEFAULT | CL_DEVICE_TYPE_CPU) != 0)
}

cl_entry! {
    fn clGetDeviceIDs(
        platform: cl_platform_id,
        device_type: cl_device_type,
        num_entries: cl_uint,
        devices: *mut cl_device_id,
        num_devices: *mut cl_uint
    ) -> cl_int {
        check_platform(platform)?;
        let matches = type_matches(device_type)?;
        if (num_entries == 0 && !devices.is_null()) || (devices.is_null() && num_devices.is_null()) {
            return Err(CL_INVALID_VALUE);
        }
        if !matches {
            write_out(num_devices, 0);
            return Err(CL_DEVICE_NOT_FOUND);
        }
        write_out(devices, handle_of(Platform::get().device()));
        write_out(num_devices, 1);
        Ok(())
    }
}

/// `CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_4x8BIT_PACKED_KHR` under a
/// name that can be a match pattern without a lint.
const DOT_PRODUCT_PROPERTIES_4X8BIT_PACKED: cl_device_info =
    CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_4x8BIT_PACKED_KHR;

fn versions(list: &[(&str, (u32, u32, u32))]) -> Vec<cl_name_version> {
    list.iter()
        .map(|(n, (a, b, c))| name_version(n, make_version(*a, *b, *c)))
        .collect()
}

fn extension_names() -> String {
    features::EXTENSIONS
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(" ")
}

fn cpu_mhz() -> u32 {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("cpu MHz"))
                .and_then(|l| l.split_once(':'))
                .and_then(|(_, v)| v.trim().parse::<f64>().ok())
        })
        .map_or(0, |mhz| mhz as u32)
}

fn cache_size() -> u64 {
    for which in [libc::_SC_LEVEL3_CACHE_SIZE, libc::_SC_LEVEL2_CACHE_SIZE] {
        // SAFETY: sysconf has no preconditions.
        let v = unsafe { libc::sysconf(which) };
        if v > 0 {
            return v as u64;
        }
    }
    0
}

const FP_CONFIG: cl_device_fp_config = CL_FP_DENORM
    | CL_FP_INF_NAN
    | CL_FP_ROUND_TO_NEAREST
    | CL_FP_ROUND_TO_ZERO
    | CL_FP_ROUND_TO_INF
    | CL_FP_FMA;

/// cl_ext_float_atomics queries (cl_ext.h; opencl-sys lacks them).
const CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT: cl_device_info = 0x4231;
const CL_DEVICE_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT: cl_device_info = 0x4232;
const CL_DEVICE_HALF_FP_ATOMIC_CAPABILITIES_EXT: cl_device_info = 0x4233;

/// cl_khr_spirv_queries queries (cl_ext.h).
const CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR: cl_device_info = 0x12B9;
const CL_DEVICE_SPIRV_EXTENSIONS_KHR: cl_device_info = 0x12BA;
const CL_DEVICE_SPIRV_CAPABILITIES_KHR: cl_device_info = 0x12BB;

/// The names in `list` as NUL-terminated strings that live as long as the process:
/// the cl_khr_spirv_queries string queries return `const char *` pointers, which
/// the application keeps without freeing.
fn static_c_strings(list: &[&str]) -> Vec<*const std::ffi::c_char> {
    use std::collections::HashMap;
    use std::ffi::CString;
    use std::sync::{Mutex, OnceLock};
    static INTERNED: OnceLock<Mutex<HashMap<String, &'static std::ffi::CStr>>> = OnceLock::new();
    let mut interned = INTERNED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    list.iter()
        .map(|name| {
            let c = *interned.entry(name.to_string()).or_insert_with(|| {
                let owned = CString::new(*name).unwrap_or_default();
                Box::leak(owned.into_boxed_c_str())
            });
            c.as_ptr()
        })
        .collect()
}

/// `CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE`.
pub const MAX_CONSTANT_BUFFER_SIZE: cl_ulong = 1 << 20;

fn device_info(dev: &Arc<Device>, param: cl_device_info, out: InfoOut) -> CLResult<()> {
    let device_enqueue = features::has_feature("__opencl_c_device_enqueue");
    let il_versions: Vec<cl_name_version> = features::SPIRV_VERSIONS
        .iter()
        .map(|(a, b)| name_version("SPIR-V", make_version(*a, *b, 0)))
        .collect();
    let il_version: String = features::SPIRV_VERSIONS
        .iter()
        .map(|(a, b)| format!("SPIR-V_{a}.{b}"))
        .collect::<Vec<_>>()
        .join(" ");
    match param {
        CL_DEVICE_TYPE => out.value::<cl_device_type>(CL_DEVICE_TYPE_CPU),
        CL_DEVICE_VENDOR_ID => out.value::<cl_uint>(0),
        CL_DEVICE_MAX_COMPUTE_UNITS => out.value::<cl_uint>(dev.compute_units),
        CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS => out.value::<cl_uint>(3),
        CL_DEVICE_MAX_WORK_ITEM_SIZES => out.array(&rt::MAX_WORK_ITEM_SIZES),
        CL_DEVICE_MAX_WORK_GROUP_SIZE => out.value(rt::MAX_WORK_GROUP_SIZE),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR | CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR => {
            out.value::<cl_uint>(16)
        }
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT | CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT => {
            out.value::<cl_uint>(8)
        }
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT | CL_DEVICE_NATIVE_VECTOR_WIDTH_INT => {
            out.value::<cl_uint>(4)
        }
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG | CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG => {
            out.value::<cl_uint>(2)
        }
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT | CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT => {
            out.value::<cl_uint>(4)
        }
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE | CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE => {
            out.value::<cl_uint>(2)
        }
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF | CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF => {
            // Eight halves fill a 128-bit lane chunk; 0 without cl_khr_fp16.
            out.value::<cl_uint>(if features::has_extension("cl_khr_fp16") {
                8
            } else {
                0
            })
        }
        CL_DEVICE_MAX_CLOCK_FREQUENCY => out.value::<cl_uint>(cpu_mhz()),
        CL_DEVICE_ADDRESS_BITS => out.value::<cl_uint>(64),
        CL_DEVICE_MAX_READ_IMAGE_ARGS
        | CL_DEVICE_MAX_WRITE_IMAGE_ARGS
        | CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS => out.value::<cl_uint>(0),
        CL_DEVICE_MAX_MEM_ALLOC_SIZE => out.value::<cl_ulong>(dev.max_mem_alloc_size),
        CL_DEVICE_IMAGE2D_MAX_WIDTH
        | CL_DEVICE_IMAGE2D_MAX_HEIGHT
        | CL_DEVICE_IMAGE3D_MAX_WIDTH
        | CL_DEVICE_IMAGE3D_MAX_HEIGHT
        | CL_DEVICE_IMAGE3D_MAX_DEPTH
        | CL_DEVICE_IMAGE_MAX_BUFFER_SIZE
        | CL_DEVICE_IMAGE_MAX_ARRAY_SIZE => out.value::<usize>(0),
        CL_DEVICE_IMAGE_SUPPORT => out.bool(features::image_support()),
        CL_DEVICE_MAX_SAMPLERS => out.value::<cl_uint>(0),
        CL_DEVICE_IMAGE_PITCH_ALIGNMENT | CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT => {
            out.value::<cl_uint>(0)
        }
        CL_DEVICE_MAX_PARAMETER_SIZE => out.value(rt::MAX_PARAMETER_SIZE),
        CL_DEVICE_MEM_BASE_ADDR_ALIGN => out.value::<cl_uint>(rt::MEM_BASE_ADDR_ALIGN_BITS),
        CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE => out.value::<cl_uint>(128),
        // f32 division and sqrt are IEEE operations, correctly rounded with or without
        // -cl-fp32-correctly-rounded-divide-sqrt.
        CL_DEVICE_SINGLE_FP_CONFIG => out.value(FP_CONFIG | CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT),
        CL_DEVICE_DOUBLE_FP_CONFIG => out.value(if features::has_feature("__opencl_c_fp64") {
            FP_CONFIG
        } else {
            0
        }),
        CL_DEVICE_HALF_FP_CONFIG => {
            // Half arithmetic is computed in f32 and rounded once: the same guarantees.
            out.value::<cl_device_fp_config>(if features::has_extension("cl_khr_fp16") {
                FP_CONFIG
            } else {
                0
            })
        }
        // cl_khr_integer_dot_product: 4x8-bit vectors and packed scalars, lowered to
        // plain multiplies and adds (no dot-product instruction: none accelerated).
        CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES_KHR
            if features::has_extension("cl_khr_integer_dot_product") =>
        {
            out.value::<cl_bitfield>(
                CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_PACKED_KHR
                    | CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_KHR,
            )
        }
        CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_8BIT_KHR
        | DOT_PRODUCT_PROPERTIES_4X8BIT_PACKED
            if features::has_extension("cl_khr_integer_dot_product") =>
        {
            out.value(cl_device_integer_dot_product_acceleration_properties {
                signed_accelerated: CL_FALSE,
                unsigned_accelerated: CL_FALSE,
                mixed_signedness_accelerated: CL_FALSE,
                accumulating_saturating_signed_accelerated: CL_FALSE,
                accumulating_saturating_unsigned_accelerated: CL_FALSE,
                accumulating_saturating_mixed_signedness_accelerated: CL_FALSE,
            })
        }
        CL_DEVICE_GLOBAL_MEM_CACHE_TYPE => {
            out.value::<cl_device_mem_cache_type>(CL_READ_WRITE_CACHE)
        }
        CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE => out.value::<cl_uint>(64),
        CL_DEVICE_GLOBAL_MEM_CACHE_SIZE => out.value::<cl_ulong>(cache_size()),
        CL_DEVICE_GLOBAL_MEM_SIZE => out.value::<cl_ulong>(dev.global_mem_size),
        CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE => out.value::<cl_ulong>(MAX_CONSTANT_BUFFER_SIZE),
        CL_DEVICE_MAX_CONSTANT_ARGS => out.value::<cl_uint>(rt::MAX_CONSTANT_ARGS),
        CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE | CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE => {
            out.value::<usize>(features::max_global_variable_size())
        }
        CL_DEVICE_LOCAL_MEM_TYPE => out.value::<cl_device_local_mem_type>(CL_LOCAL),
        CL_DEVICE_LOCAL_MEM_SIZE => out.value::<cl_ulong>(rt::LOCAL_MEM_SIZE),
        CL_DEVICE_ERROR_CORRECTION_SUPPORT => out.bool(false),
        CL_DEVICE_PROFILING_TIMER_RESOLUTION => out.value::<usize>(1),
        CL_DEVICE_ENDIAN_LITTLE => out.bool(cfg!(target_endian = "little")),
        CL_DEVICE_AVAILABLE | CL_DEVICE_COMPILER_AVAILABLE | CL_DEVICE_LINKER_AVAILABLE => {
            out.bool(true)
        }
        CL_DEVICE_EXECUTION_CAPABILITIES => {
            out.value::<cl_device_exec_capabilities>(CL_EXEC_KERNEL | CL_EXEC_NATIVE_KERNEL)
        }
        CL_DEVICE_QUEUE_ON_HOST_PROPERTIES => out.value::<cl_command_queue_properties>(
            CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
        ),
        CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES => {
            out.value::<cl_command_queue_properties>(if device_enqueue {
                CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE
            } else {
                0
            })
        }
        CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE => out.value::<cl_uint>(if device_enqueue {
            de::PREFERRED_QUEUE_SIZE
        } else {
            0
        }),
        CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE => out.value::<cl_uint>(if device_enqueue {
            de::MAX_QUEUE_SIZE
        } else {
            0
        }),
        CL_DEVICE_MAX_ON_DEVICE_QUEUES => out.value::<cl_uint>(if device_enqueue {
            de::MAX_ON_DEVICE_QUEUES
        } else {
            0
        }),
        CL_DEVICE_MAX_ON_DEVICE_EVENTS => out.value::<cl_uint>(if device_enqueue {
            de::MAX_ON_DEVICE_EVENTS
        } else {
            0
        }),
        CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES => out
            .value::<cl_device_device_enqueue_capabilities>(if device_enqueue {
                CL_DEVICE_QUEUE_SUPPORTED | CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT
            } else {
                0
            }),
        CL_DEVICE_BUILT_IN_KERNELS => out.string(""),
        CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION => out.array::<cl_name_version>(&[]),
        CL_DEVICE_PLATFORM => out.value(platform_handle()),
        CL_DEVICE_NAME => out.string(&dev.name),
        CL_DEVICE_VENDOR => out.string(rt::VENDOR),
        CL_DRIVER_VERSION => out.string(rt::DRIVER_VERSION),
        CL_DEVICE_PROFILE => out.string(rt::PROFILE),
        CL_DEVICE_VERSION => out.string(rt::DEVICE_VERSION),
        CL_DEVICE_NUMERIC_VERSION => {
            let (major, minor, patch) = rt::API_VERSION;
            out.value(make_version(major, minor, patch))
        }
        CL_DEVICE_OPENCL_C_VERSION => out.string(rt::OPENCL_C_VERSION),
        CL_DEVICE_OPENCL_C_ALL_VERSIONS => out.array(
            &features::OPENCL_C_VERSIONS
                .iter()
                .map(|(a, b, c)| name_version("OpenCL C", make_version(*a, *b, *c)))
                .collect::<Vec<_>>(),
        ),
        CL_DEVICE_OPENCL_C_FEATURES => out.array(&versions(&features::opencl_c_features())),
        CL_DEVICE_EXTENSIONS => out.string(&extension_names()),
        CL_DEVICE_EXTENSIONS_WITH_VERSION => out.array(&versions(features::EXTENSIONS)),
        CL_DEVICE_IL_VERSION => out.string(&il_version),
        CL_DEVICE_ILS_WITH_VERSION => out.array(&il_versions),
        CL_DEVICE_PRINTF_BUFFER_SIZE => out.value(rt::PRINTF_BUFFER_SIZE),
        CL_DEVICE_PREFERRED_INTEROP_USER_SYNC => out.bool(true),
        CL_DEVICE_HOST_UNIFIED_MEMORY => out.bool(true),
        CL_DEVICE_PARENT_DEVICE => {
            out.value::<cl_device_id>(dev.parent.as_ref().map_or(std::ptr::null_mut(), handle_of))
        }
        CL_DEVICE_PARTITION_MAX_SUB_DEVICES => {
            out.value::<cl_uint>(partition::max_sub_devices(dev))
        }
        CL_DEVICE_PARTITION_PROPERTIES => out.array(&partition::properties(dev)),
        CL_DEVICE_PARTITION_AFFINITY_DOMAIN => out.value(partition::affinity_domains(dev)),
        CL_DEVICE_PARTITION_TYPE => out.array(&dev.partition_type),
        CL_DEVICE_REFERENCE_COUNT => out.value::<cl_uint>(if dev.is_root() {
            1
        } else {
            dev.header().api_refs()
        }),
        CL_DEVICE_SVM_CAPABILITIES => out.value::<cl_device_svm_capabilities>(
            CL_DEVICE_SVM_COARSE_GRAIN_BUFFER
                | CL_DEVICE_SVM_FINE_GRAIN_BUFFER
                | CL_DEVICE_SVM_FINE_GRAIN_SYSTEM
                | CL_DEVICE_SVM_ATOMICS,
        ),
        CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT
        | CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT
        | CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT => out.value::<cl_uint>(0),
        // 0 without pipe support, as the spec asks.
        CL_DEVICE_MAX_PIPE_ARGS => out.value::<cl_uint>(pipe_limit(mem::MAX_PIPE_ARGS)),
        CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS => {
            out.value::<cl_uint>(pipe_limit(mem::PIPE_MAX_ACTIVE_RESERVATIONS))
        }
        CL_DEVICE_PIPE_MAX_PACKET_SIZE => {
            out.value::<cl_uint>(pipe_limit(mem::PIPE_MAX_PACKET_SIZE))
        }
        CL_DEVICE_PIPE_SUPPORT => out.bool(features::pipe_support()),
        CL_DEVICE_MAX_NUM_SUB_GROUPS => {
            out.value::<cl_uint>(if features::has_feature("__opencl_c_subgroups") {
                (rt::MAX_WORK_GROUP_SIZE / 4) as cl_uint
            } else {
                0
            })
        }
        // Loops whose exit reads an atomic yield to the next sub-group at their
        // back-edges (jit::analysis::spin), so a sub-group waiting for another ends.
        CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS => out.bool(true),
        CL_DEVICE_SUB_GROUP_SIZES_INTEL => out.array(
            &SUPPORTED_SUB_GROUP_WIDTHS
                .iter()
                .map(|w| *w as usize)
                .collect::<Vec<_>>(),
        ),
        CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES => out.value(features::atomic_memory_capabilities()),
        CL_DEVICE_ATOMIC_FENCE_CAPABILITIES => out.value(features::atomic_fence_capabilities()),
        CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT => out.bool(true),
        CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT => out.bool(features::has_feature(
            "__opencl_c_work_group_collective_functions",
        )),
        CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT => out.bool(features::generic_address_space()),
        CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE => {
            out.value::<usize>(DEFAULT_SUB_GROUP_WIDTH as usize)
        }
        CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL
        | CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL
        | CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL => {
            out.value::<cl_device_unified_shared_memory_capabilities_intel>(
                super::usm::USM_CAPABILITIES,
            )
        }
        CL_DEVICE_CROSS_DEVICE_SHARED_MEM_CAPABILITIES_INTEL
        | CL_DEVICE_SHARED_SYSTEM_MEM_CAPABILITIES_INTEL => {
            out.value::<cl_device_unified_shared_memory_capabilities_intel>(0)
        }
        CL_DEVICE_UUID_KHR => out.array(&dev.uuid()),
        CL_DRIVER_UUID_KHR => out.array(&rt::driver_uuid()),
        CL_DEVICE_LUID_VALID_KHR => out.bool(false),
        CL_DEVICE_LUID_KHR => out.array(&[0u8; CL_LUID_SIZE_KHR]),
        CL_DEVICE_NODE_MASK_KHR => out.value::<cl_uint>(0),
        CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED => out.string("v0000-01-01-00"),
        CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT => {
            out.value::<cl_bitfield>(features::fp_atomic_capabilities("fp32"))
        }
        CL_DEVICE_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT => {
            out.value::<cl_bitfield>(features::fp_atomic_capabilities("fp64"))
        }
        CL_DEVICE_HALF_FP_ATOMIC_CAPABILITIES_EXT => {
            out.value::<cl_bitfield>(features::fp_atomic_capabilities("fp16"))
        }
        CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR => out.array(&static_c_strings(
            &features::spirv_extended_instruction_sets(),
        )),
        CL_DEVICE_SPIRV_EXTENSIONS_KHR => {
            out.array(&static_c_strings(&features::spirv_extensions()))
        }
        CL_DEVICE_SPIRV_CAPABILITIES_KHR => out.array(&features::spirv_capabilities()),
        _ => Err(CL_INVALID_VALUE),
    }
}

cl_entry! {
    fn clGetDeviceInfo(
        device: cl_device_id,
        param_name: cl_device_info,
        param_value_size: size_t,
        param_value: *mut c_void,
        param_value_size_ret: *mut size_t
    ) -> cl_int {
        let dev = get::<Device>(device)?;
        device_info(&dev, param_name, InfoOut::new(param_value_size, param_value, param_value_size_ret))
    }
}

cl_entry! {
    fn clRetainDevice(device: cl_device_id) -> cl_int {
        if get::<Device>(device)?.is_root() {
            return Ok(());
        }
        handle::retain::<Device>(device)
    }
}

cl_entry! {
    fn clReleaseDevice(device: cl_device_id) -> cl_int {
        if get::<Device>(device)?.is_root() {
            return Ok(());
        }
        handle::release::<Device>(device)
    }
}

/// Reads a partition property list up to and including its terminator, following
/// each scheme's layout (`EQUALLY n`, `BY_COUNTS c... LIST_END`,
/// `BY_AFFINITY_DOMAIN d`) so that nothing past the application's list is read; an
/// unknown name ends the reading (the runtime refuses it).
fn partition_properties(
    ptr: *const cl_device_partition_property,
) -> CLResult<Vec<cl_device_partition_property>> {
    if ptr.is_null() || !ptr.is_aligned() {
        return Err(CL_INVALID_VALUE);
    }
    // SAFETY: the application passes a list laid out as the scheme names say, ending
    // in 0; `at` reads only the elements that layout says are there.
    let at = |i: usize| unsafe { *ptr.add(i) };
    let mut list = Vec::new();
    loop {
        let name = at(list.len());
        list.push(name);
        if list.len() > MAX_COUNTS + 8 {
            return Err(CL_INVALID_VALUE);
        }
        match name {
            0 => return Ok(list),
            CL_DEVICE_PARTITION_EQUALLY | CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN => {
                list.push(at(list.len()))
            }
            CL_DEVICE_PARTITION_BY_COUNTS => loop {
                let count = at(list.len());
                list.push(count);
                if count == CL_DEVICE_PARTITION_BY_COUNTS_LIST_END || list.len() > MAX_COUNTS + 8 {
                    break;
                }
            },
            _ => return Ok(list),
        }
    }
}

cl_entry! {
    fn clCreateSubDevices(
        in_device: cl_device_id,
        properties: *const cl_device_partition_property,
        num_devices: cl_uint,
        out_devices: *mut cl_device_id,
        num_devices_ret: *mut cl_uint
    ) -> cl_int {
        let dev = get::<Device>(in_device)?;
        let partition = Partition::new(&dev, &partition_properties(properties)?)?;
        if !out_devices.is_null() {
            if (num_devices as usize) < partition.len() {
                return Err(CL_INVALID_VALUE);
            }
            for (i, sub) in partition.create(&dev).into_iter().enumerate() {
                // SAFETY: `out_devices` has room for `num_devices` >= partition.len() handles.
                unsafe { out_devices.add(i).write(new_handle(sub)) };
            }
        }
        write_out(num_devices_ret, partition.len() as cl_uint);
        Ok(())
    }
}

/// A pipe limit, or 0 when the device claims no pipes.
fn pipe_limit(v: cl_uint) -> cl_uint {
    if features::pipe_support() {
        v
    } else {
        0
    }
}
