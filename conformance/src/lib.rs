//! Shared helpers for the conformance tests.
//!
//! The tests reach the driver exactly the way applications do: through the ICD loader
//! (`libOpenCL.so`, linked by `cl-sys`). This library wraps the raw API in small owning
//! types ([`Context`], [`Queue`], [`Buffer`], [`Program`], [`Kernel`]) that release
//! their handle on drop, turns error codes into [`ClError`] values that name the call
//! and the code, and offers the few conveniences every test needs: find the platform
//! under test, build from source or SPIR-V with the build log on failure, move data
//! between host vectors and buffers, run an ND-range and wait for it.
//!
//! Which platform is tested: the first one whose name contains `CRANECL_TEST_PLATFORM`
//! (case-insensitive; default `cranecl`). Running the suite against another driver
//! (e.g. `CRANECL_TEST_PLATFORM=Portable` for PoCL) validates the tests themselves.
//! Tests of features only cranecl promises (sub-group widths, `cl_intel_subgroups`,
//! SPIR-V input) call [`require`]: on cranecl a missing feature is a failure, on any
//! other platform the test returns early with a note on stderr.
//!
//! Driver configuration read from the environment (`CRANECL_CLANG`,
//! `CRANECL_NUM_THREADS`, `CRANECL_SUBGROUP_WIDTH`) is tested in a re-executed copy of
//! the test binary ([`run_in_child`]), since environment variables are process-global.
//!
//! This library must not hide driver failures: helpers whose names do not start with
//! `try_` panic with a message carrying the OpenCL error code (and the build log).

// OpenCL handles (`cl_platform_id`, `cl_device_id`, ...) are raw pointers to opaque
// driver objects. These helpers only pass them on to the API, which validates them;
// they never dereference them, so the functions are safe to call with any handle.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod guarded;
pub mod spirv;

use std::ffi::{c_char, c_void, CStr, CString};
use std::fmt;
use std::ptr;
use std::sync::OnceLock;

pub use cl_sys as sys;
use cl_sys::*;

/// OpenCL 2.1/3.0 and extension constants that `cl-sys` lacks (values from the
/// Khronos headers, via `opencl-sys`).
pub mod consts {
    pub use opencl_sys::{
        CL_DEVICE_ATOMIC_FENCE_CAPABILITIES, CL_DEVICE_ATOMIC_ORDER_ACQ_REL,
        CL_DEVICE_ATOMIC_ORDER_RELAXED, CL_DEVICE_ATOMIC_ORDER_SEQ_CST,
        CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES, CL_DEVICE_ATOMIC_SCOPE_DEVICE,
        CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP, CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM,
    };
    pub use opencl_sys::{
        CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES, CL_DEVICE_EXTENSIONS_WITH_VERSION,
        CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT, CL_DEVICE_ILS_WITH_VERSION,
        CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, CL_DEVICE_NUMERIC_VERSION,
        CL_DEVICE_OPENCL_C_ALL_VERSIONS, CL_DEVICE_OPENCL_C_FEATURES, CL_DEVICE_PIPE_SUPPORT,
        CL_DEVICE_SUB_GROUP_SIZES_INTEL, CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT,
        CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL, CL_PLATFORM_EXTENSIONS_WITH_VERSION,
        CL_PLATFORM_ICD_SUFFIX_KHR, CL_PLATFORM_NUMERIC_VERSION,
    };
    /// `CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE_KHR` (same value as the 2.1 core name).
    pub const CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE_KHR: u32 = 0x2034;
    /// `CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE_KHR` (same value as the 2.1 core name).
    pub const CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE_KHR: u32 = 0x2033;
    /// `CL_MAKE_VERSION(major, minor, patch)`.
    pub const fn make_version(major: u32, minor: u32, patch: u32) -> u32 {
        (major << 22) | (minor << 12) | patch
    }
}

/// A failed OpenCL call: which call, the code, and what the test was doing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClError {
    /// The `cl_int` error code the call returned.
    pub code: cl_int,
    /// The API function (and, where useful, its subject) that failed.
    pub call: String,
}

impl fmt::Display for ClError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} failed with {} ({})",
            self.call,
            error_name(self.code),
            self.code
        )
    }
}

impl std::error::Error for ClError {}

/// Result of a wrapped OpenCL call.
pub type ClResult<T> = Result<T, ClError>;

/// Turns a status code into a [`ClResult`].
pub fn check(code: cl_int, call: impl Into<String>) -> ClResult<()> {
    if code == CL_SUCCESS as cl_int {
        Ok(())
    } else {
        Err(ClError {
            code,
            call: call.into(),
        })
    }
}

/// The symbolic name of an OpenCL error code (for messages).
pub fn error_name(code: cl_int) -> &'static str {
    match code {
        0 => "CL_SUCCESS",
        -1 => "CL_DEVICE_NOT_FOUND",
        -2 => "CL_DEVICE_NOT_AVAILABLE",
        -3 => "CL_COMPILER_NOT_AVAILABLE",
        -4 => "CL_MEM_OBJECT_ALLOCATION_FAILURE",
        -5 => "CL_OUT_OF_RESOURCES",
        -6 => "CL_OUT_OF_HOST_MEMORY",
        -7 => "CL_PROFILING_INFO_NOT_AVAILABLE",
        -8 => "CL_MEM_COPY_OVERLAP",
        -9 => "CL_IMAGE_FORMAT_MISMATCH",
        -10 => "CL_IMAGE_FORMAT_NOT_SUPPORTED",
        -11 => "CL_BUILD_PROGRAM_FAILURE",
        -12 => "CL_MAP_FAILURE",
        -13 => "CL_MISALIGNED_SUB_BUFFER_OFFSET",
        -14 => "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
        -15 => "CL_COMPILE_PROGRAM_FAILURE",
        -16 => "CL_LINKER_NOT_AVAILABLE",
        -17 => "CL_LINK_PROGRAM_FAILURE",
        -18 => "CL_DEVICE_PARTITION_FAILED",
        -19 => "CL_KERNEL_ARG_INFO_NOT_AVAILABLE",
        -30 => "CL_INVALID_VALUE",
        -31 => "CL_INVALID_DEVICE_TYPE",
        -32 => "CL_INVALID_PLATFORM",
        -33 => "CL_INVALID_DEVICE",
        -34 => "CL_INVALID_CONTEXT",
        -35 => "CL_INVALID_QUEUE_PROPERTIES",
        -36 => "CL_INVALID_COMMAND_QUEUE",
        -37 => "CL_INVALID_HOST_PTR",
        -38 => "CL_INVALID_MEM_OBJECT",
        -39 => "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR",
        -40 => "CL_INVALID_IMAGE_SIZE",
        -41 => "CL_INVALID_SAMPLER",
        -42 => "CL_INVALID_BINARY",
        -43 => "CL_INVALID_BUILD_OPTIONS",
        -44 => "CL_INVALID_PROGRAM",
        -45 => "CL_INVALID_PROGRAM_EXECUTABLE",
        -46 => "CL_INVALID_KERNEL_NAME",
        -47 => "CL_INVALID_KERNEL_DEFINITION",
        -48 => "CL_INVALID_KERNEL",
        -49 => "CL_INVALID_ARG_INDEX",
        -50 => "CL_INVALID_ARG_VALUE",
        -51 => "CL_INVALID_ARG_SIZE",
        -52 => "CL_INVALID_KERNEL_ARGS",
        -53 => "CL_INVALID_WORK_DIMENSION",
        -54 => "CL_INVALID_WORK_GROUP_SIZE",
        -55 => "CL_INVALID_WORK_ITEM_SIZE",
        -56 => "CL_INVALID_GLOBAL_OFFSET",
        -57 => "CL_INVALID_EVENT_WAIT_LIST",
        -58 => "CL_INVALID_EVENT",
        -59 => "CL_INVALID_OPERATION",
        -60 => "CL_INVALID_GL_OBJECT",
        -61 => "CL_INVALID_BUFFER_SIZE",
        -62 => "CL_INVALID_MIP_LEVEL",
        -63 => "CL_INVALID_GLOBAL_WORK_SIZE",
        -64 => "CL_INVALID_PROPERTY",
        -65 => "CL_INVALID_IMAGE_DESCRIPTOR",
        -66 => "CL_INVALID_COMPILER_OPTIONS",
        -67 => "CL_INVALID_LINKER_OPTIONS",
        -68 => "CL_INVALID_DEVICE_PARTITION_COUNT",
        -69 => "CL_INVALID_PIPE_SIZE",
        -70 => "CL_INVALID_DEVICE_QUEUE",
        -71 => "CL_INVALID_SPEC_ID",
        -72 => "CL_MAX_SIZE_RESTRICTION_EXCEEDED",
        -1001 => "CL_PLATFORM_NOT_FOUND_KHR",
        _ => "unknown error code",
    }
}

/// Plain-old-data types that may be filled from any bytes a driver returns.
///
/// # Safety
/// Implementors must be `Copy`, have no padding and accept every bit pattern.
pub unsafe trait Pod: Copy + Default + 'static {}

macro_rules! pod {
    ($($t:ty),*) => { $(
        // SAFETY: primitive numeric types have no padding and no invalid bit patterns.
        unsafe impl Pod for $t {}
    )* };
}
pod!(u8, i8, u16, i16, u32, i32, u64, i64, usize, isize, f32, f64);
// SAFETY: an array of Pod elements has no padding and accepts every bit pattern.
unsafe impl<T: Pod, const N: usize> Pod for [T; N] where [T; N]: Default {}

/// Views a slice of Pod values as bytes.
pub fn as_bytes<T: Pod>(data: &[T]) -> &[u8] {
    // SAFETY: T is Pod (no padding), the length covers exactly the slice's memory.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) }
}

/// Copies bytes into a vector of Pod values; panics if the length is not a multiple.
pub fn from_bytes<T: Pod>(bytes: &[u8]) -> Vec<T> {
    let size = std::mem::size_of::<T>();
    assert_eq!(
        bytes.len() % size,
        0,
        "{} bytes is not a whole number of {size}-byte values",
        bytes.len()
    );
    let mut out = vec![T::default(); bytes.len() / size];
    // SAFETY: `out` has exactly bytes.len() bytes of storage; T accepts any bit pattern.
    unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), out.as_mut_ptr().cast::<u8>(), bytes.len()) };
    out
}

/// Runs a `clGet*Info`-style query twice (size, then data) and returns the bytes.
pub fn query_bytes(
    call: &str,
    mut query: impl FnMut(usize, *mut c_void, *mut usize) -> cl_int,
) -> ClResult<Vec<u8>> {
    let mut size = 0usize;
    check(
        query(0, ptr::null_mut(), &mut size),
        format!("{call} (size)"),
    )?;
    let mut bytes = vec![0u8; size];
    let mut size_again = 0usize;
    check(
        query(size, bytes.as_mut_ptr().cast(), &mut size_again),
        call.to_string(),
    )?;
    assert_eq!(
        size, size_again,
        "{call}: size changed between the two queries"
    );
    Ok(bytes)
}

/// Decodes a NUL-terminated info string; panics if the terminator is missing.
pub fn bytes_to_string(call: &str, bytes: &[u8]) -> String {
    assert_eq!(
        bytes.last(),
        Some(&0),
        "{call}: string not NUL-terminated: {bytes:?}"
    );
    let body = &bytes[..bytes.len() - 1];
    assert!(
        !body.contains(&0),
        "{call}: string contains an embedded NUL: {bytes:?}"
    );
    String::from_utf8_lossy(body).into_owned()
}

/// Reads a query whose value is exactly one `T`; the reported size must equal
/// `size_of::<T>()` (the spec's return types are part of the contract).
pub fn query_value<T: Pod>(
    call: &str,
    query: impl FnMut(usize, *mut c_void, *mut usize) -> cl_int,
) -> ClResult<T> {
    let bytes = query_bytes(call, query)?;
    assert_eq!(
        bytes.len(),
        std::mem::size_of::<T>(),
        "{call}: returned {} bytes, the spec's type has {}",
        bytes.len(),
        std::mem::size_of::<T>()
    );
    Ok(from_bytes::<T>(&bytes)[0])
}

/// `clGetPlatformInfo` as bytes.
pub fn platform_info_bytes(platform: cl_platform_id, param: cl_uint) -> ClResult<Vec<u8>> {
    query_bytes(&format!("clGetPlatformInfo({param:#x})"), |n, p, r| {
        // SAFETY: the pointers come from query_bytes and are valid for n bytes / one usize.
        unsafe { clGetPlatformInfo(platform, param, n, p, r) }
    })
}

/// `clGetPlatformInfo` for a string parameter.
pub fn platform_info_string(platform: cl_platform_id, param: cl_uint) -> ClResult<String> {
    let bytes = platform_info_bytes(platform, param)?;
    Ok(bytes_to_string(
        &format!("clGetPlatformInfo({param:#x})"),
        &bytes,
    ))
}

/// `clGetDeviceInfo` as bytes.
pub fn device_info_bytes(device: cl_device_id, param: cl_uint) -> ClResult<Vec<u8>> {
    query_bytes(&format!("clGetDeviceInfo({param:#x})"), |n, p, r| {
        // SAFETY: the pointers come from query_bytes and are valid for n bytes / one usize.
        unsafe { clGetDeviceInfo(device, param, n, p, r) }
    })
}

/// `clGetDeviceInfo` for a string parameter.
pub fn device_info_string(device: cl_device_id, param: cl_uint) -> ClResult<String> {
    let bytes = device_info_bytes(device, param)?;
    Ok(bytes_to_string(
        &format!("clGetDeviceInfo({param:#x})"),
        &bytes,
    ))
}

/// `clGetDeviceInfo` for a fixed-size parameter of type `T` (size checked exactly).
pub fn device_info<T: Pod>(device: cl_device_id, param: cl_uint) -> ClResult<T> {
    query_value(&format!("clGetDeviceInfo({param:#x})"), |n, p, r| {
        // SAFETY: the pointers come from query_bytes and are valid for n bytes / one usize.
        unsafe { clGetDeviceInfo(device, param, n, p, r) }
    })
}

/// All platforms the ICD loader reports.
pub fn platforms() -> ClResult<Vec<cl_platform_id>> {
    let mut count: cl_uint = 0;
    // SAFETY: NULL list with a valid count pointer is the documented size query.
    let code = unsafe { clGetPlatformIDs(0, ptr::null_mut(), &mut count) };
    if code == CL_PLATFORM_NOT_FOUND_KHR {
        return Ok(Vec::new());
    }
    check(code, "clGetPlatformIDs (count)")?;
    let mut ids = vec![ptr::null_mut(); count as usize];
    // SAFETY: `ids` holds `count` elements.
    check(
        unsafe { clGetPlatformIDs(count, ids.as_mut_ptr(), ptr::null_mut()) },
        "clGetPlatformIDs",
    )?;
    Ok(ids)
}

/// The platform name pattern under test (`CRANECL_TEST_PLATFORM`, default `cranecl`).
pub fn wanted_platform_name() -> String {
    std::env::var("CRANECL_TEST_PLATFORM").unwrap_or_else(|_| "cranecl".to_string())
}

/// Whether the platform under test is cranecl (then every cranecl promise is asserted).
pub fn testing_cranecl() -> bool {
    wanted_platform_name().to_lowercase().contains("cranecl")
}

/// The platform under test; panics with the list of platforms found if it is absent
/// (for cranecl: set `OCL_ICD_VENDORS` to a folder holding `cranecl.icd`, see README).
pub fn find_platform() -> cl_platform_id {
    static FOUND: OnceLock<usize> = OnceLock::new();
    let addr = *FOUND.get_or_init(|| {
        let wanted = wanted_platform_name().to_lowercase();
        let list = platforms().unwrap_or_else(|e| panic!("listing platforms: {e}"));
        let mut seen = Vec::new();
        for p in list {
            let name = platform_info_string(p, CL_PLATFORM_NAME).unwrap_or_else(|e| e.to_string());
            if name.to_lowercase().contains(&wanted) {
                // Enumerate devices once before tests run in parallel: some drivers
                // (PoCL 3.1) initialise their devices lazily and not thread-safely.
                let _ = first_device(p);
                return p as usize;
            }
            seen.push(name);
        }
        panic!(
            "no OpenCL platform named like {wanted:?} (found: {seen:?}; OCL_ICD_VENDORS={:?}). \
             Build the driver and point OCL_ICD_VENDORS at build/icd (`make icd`), or set \
             CRANECL_TEST_PLATFORM to test another driver.",
            std::env::var("OCL_ICD_VENDORS").ok()
        );
    });
    addr as cl_platform_id
}

/// The first device of `platform` (any type).
pub fn first_device(platform: cl_platform_id) -> cl_device_id {
    let mut device: cl_device_id = ptr::null_mut();
    let mut count: cl_uint = 0;
    // SAFETY: room for one device and a valid count pointer.
    let code = unsafe { clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &mut device, &mut count) };
    check(code, "clGetDeviceIDs").unwrap_or_else(|e| panic!("{e}"));
    assert!(
        count >= 1 && !device.is_null(),
        "platform reports no device"
    );
    device
}

/// Path of the driver library for direct (loader-less) loading: `CRANECL_LIB`, else,
/// when testing cranecl, `libcranecl.so` in `$CARGO_TARGET_DIR` or the workspace's
/// `target/{release,debug}`.
pub fn driver_library() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    if let Ok(path) = std::env::var("CRANECL_LIB") {
        return Some(PathBuf::from(path));
    }
    if !testing_cranecl() {
        return None;
    }
    let mut dirs = Vec::new();
    if let Ok(dir) = std::env::var("CARGO_TARGET_DIR") {
        dirs.push(PathBuf::from(dir));
    }
    dirs.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    dirs.iter()
        .flat_map(|d| {
            [
                d.join("release/libcranecl.so"),
                d.join("debug/libcranecl.so"),
            ]
        })
        .find(|p| p.exists())
}

/// The driver library loaded directly (never unloaded, as loaders never unload
/// drivers), or `None` when [`driver_library`] finds none.
pub fn driver_direct() -> Option<&'static libloading::Library> {
    static LIB: OnceLock<Option<usize>> = OnceLock::new();
    let addr = *LIB.get_or_init(|| {
        let path = driver_library()?;
        // Let the loader load and initialise the driver first, as in an application
        // that uses both paths; the second dlopen then shares that instance.
        let _ = find_platform();
        // SAFETY: loading the driver runs its initialisers, which is what a loader does.
        let lib = unsafe { libloading::Library::new(&path) }
            .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()));
        Some(Box::leak(Box::new(lib)) as *const libloading::Library as usize)
    });
    // SAFETY: the leaked Library lives for the rest of the process.
    addr.map(|a| unsafe { &*(a as *const libloading::Library) })
}

/// Returns whether a test of an optional feature should run.
///
/// `supported` says whether the platform under test advertises `what`. On cranecl the
/// feature is promised, so `false` panics; on any other platform the test is skipped
/// (returns `false` after a note on stderr).
pub fn require(supported: bool, what: &str) -> bool {
    if supported {
        return true;
    }
    if testing_cranecl() {
        panic!("cranecl must support {what}, but the device does not advertise it");
    }
    eprintln!(
        "skipped: platform {:?} lacks {what}",
        wanted_platform_name()
    );
    false
}

macro_rules! owned_handle {
    ($(#[$doc:meta])* $name:ident, $raw:ty, $release:ident, $retain:ident) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name($raw);

        impl $name {
            /// Takes ownership of one reference to `raw` (released on drop).
            ///
            /// # Safety
            /// `raw` must be a valid handle whose reference the caller owns.
            pub unsafe fn from_raw(raw: $raw) -> Self {
                $name(raw)
            }

            /// The raw handle (still owned by `self`).
            pub fn raw(&self) -> $raw {
                self.0
            }

            /// Gives up ownership without releasing.
            pub fn into_raw(self) -> $raw {
                let raw = self.0;
                std::mem::forget(self);
                raw
            }
        }

        impl Clone for $name {
            fn clone(&self) -> Self {
                // SAFETY: self.0 is a valid handle we hold a reference to.
                let code = unsafe { $retain(self.0) };
                check(code, stringify!($retain)).unwrap_or_else(|e| panic!("{e}"));
                $name(self.0)
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                // SAFETY: we own one reference to the handle.
                let code = unsafe { $release(self.0) };
                if code != CL_SUCCESS as cl_int && !std::thread::panicking() {
                    panic!("{}", ClError { code, call: stringify!($release).to_string() });
                }
            }
        }

        // SAFETY: OpenCL handles may be used from any thread (the API is thread-safe).
        unsafe impl Send for $name {}
        // SAFETY: as above; all mutation goes through the thread-safe API.
        unsafe impl Sync for $name {}
    };
}

owned_handle!(
    /// An owned `cl_context`.
    Context, cl_context, clReleaseContext, clRetainContext
);
owned_handle!(
    /// An owned `cl_command_queue`.
    Queue, cl_command_queue, clReleaseCommandQueue, clRetainCommandQueue
);
owned_handle!(
    /// An owned `cl_mem` (buffer or sub-buffer).
    Buffer, cl_mem, clReleaseMemObject, clRetainMemObject
);
owned_handle!(
    /// An owned `cl_program`.
    Program, cl_program, clReleaseProgram, clRetainProgram
);
owned_handle!(
    /// An owned `cl_kernel`.
    Kernel, cl_kernel, clReleaseKernel, clRetainKernel
);
owned_handle!(
    /// An owned `cl_event`.
    Event, cl_event, clReleaseEvent, clRetainEvent
);
owned_handle!(
    /// An owned sub-device (`clCreateSubDevices`).
    SubDevice, cl_device_id, clReleaseDevice, clRetainDevice
);

/// A cranecl executable program binary holding the SPIR-V module `il` unchecked
/// (magic, binary type, options length, word count, no options, the words): how a
/// test gets words past `clCreateProgramWithIL`'s validation to the build.
pub fn cranecl_binary(il: &[u8]) -> Vec<u8> {
    let mut bin = b"CRANECL\x02".to_vec();
    bin.extend_from_slice(&(CL_PROGRAM_BINARY_TYPE_EXECUTABLE as u32).to_le_bytes());
    bin.extend_from_slice(&0u32.to_le_bytes());
    bin.extend_from_slice(&((il.len() / 4) as u32).to_le_bytes());
    bin.extend_from_slice(il);
    bin
}

/// Why a build failed: the code of `clBuildProgram` and the device's build log.
#[derive(Clone, Debug)]
pub struct BuildFailure {
    /// What `clCreateProgramWith*` or `clBuildProgram` returned.
    pub code: cl_int,
    /// `CL_PROGRAM_BUILD_LOG` (empty if no program object exists).
    pub log: String,
}

impl fmt::Display for BuildFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "build failed with {} ({}); log:\n{}",
            error_name(self.code),
            self.code,
            self.log
        )
    }
}

/// The platform, device, context and in-order queue most tests work with.
#[derive(Debug)]
pub struct DeviceContext {
    /// The platform under test.
    pub platform: cl_platform_id,
    /// Its first device.
    pub device: cl_device_id,
    /// A context on that device.
    pub context: Context,
    /// An in-order queue on that device.
    pub queue: Queue,
}

impl Default for DeviceContext {
    fn default() -> Self {
        Self::new()
    }
}

impl DeviceContext {
    /// Context and queue on the first device of the platform under test.
    pub fn new() -> Self {
        let platform = find_platform();
        let device = first_device(platform);
        let props: [cl_context_properties; 3] = [
            CL_CONTEXT_PLATFORM as cl_context_properties,
            platform as cl_context_properties,
            0,
        ];
        let mut err = 0;
        // SAFETY: valid property list, one device, no callback.
        let context =
            unsafe { clCreateContext(props.as_ptr(), 1, &device, None, ptr::null_mut(), &mut err) };
        check(err, "clCreateContext").unwrap_or_else(|e| panic!("{e}"));
        // SAFETY: clCreateContext succeeded, we own the reference.
        let context = unsafe { Context::from_raw(context) };
        // SAFETY: valid context and device.
        let queue = unsafe { clCreateCommandQueue(context.raw(), device, 0, &mut err) };
        check(err, "clCreateCommandQueue").unwrap_or_else(|e| panic!("{e}"));
        // SAFETY: clCreateCommandQueue succeeded, we own the reference.
        let queue = unsafe { Queue::from_raw(queue) };
        DeviceContext {
            platform,
            device,
            context,
            queue,
        }
    }

    /// `CL_DEVICE_EXTENSIONS` contains `name` as a whole word.
    pub fn has_extension(&self, name: &str) -> bool {
        device_info_string(self.device, CL_DEVICE_EXTENSIONS)
            .map(|e| e.split_whitespace().any(|x| x == name))
            .unwrap_or(false)
    }

    /// `CL_DEVICE_OPENCL_C_ALL_VERSIONS` lists OpenCL C `major.minor`.
    pub fn supports_opencl_c(&self, major: u32, minor: u32) -> bool {
        let wanted = consts::make_version(major, minor, 0);
        device_info_bytes(self.device, consts::CL_DEVICE_OPENCL_C_ALL_VERSIONS)
            .map(|bytes| {
                // cl_name_version: a cl_version (patch ignored), then a 64-byte name.
                bytes.chunks_exact(68).any(|c| {
                    u32::from_ne_bytes([c[0], c[1], c[2], c[3]]) & !0xfff == wanted
                        && c[4..].starts_with(b"OpenCL C\0")
                })
            })
            .unwrap_or(false)
    }

    /// The device accepts SPIR-V (`CL_DEVICE_IL_VERSION` mentions SPIR-V).
    pub fn supports_spirv(&self) -> bool {
        device_info_string(self.device, CL_DEVICE_IL_VERSION)
            .map(|v| v.contains("SPIR-V"))
            .unwrap_or(false)
    }

    /// Sub-group sizes the device supports (`CL_DEVICE_SUB_GROUP_SIZES_INTEL`), empty
    /// if the query is not supported.
    pub fn sub_group_sizes(&self) -> Vec<usize> {
        device_info_bytes(self.device, consts::CL_DEVICE_SUB_GROUP_SIZES_INTEL)
            .map(|b| from_bytes::<usize>(&b))
            .unwrap_or_default()
    }

    /// Creates a program from source and builds it; on failure returns the code and log.
    pub fn try_build(&self, source: &str, options: &str) -> Result<Program, BuildFailure> {
        let program = self
            .try_program_from_source(source)
            .map_err(|e| BuildFailure {
                code: e.code,
                log: String::new(),
            })?;
        self.try_build_program(program, options)
    }

    /// Builds from source; panics with the build log on failure.
    pub fn build(&self, source: &str, options: &str) -> Program {
        self.try_build(source, options)
            .unwrap_or_else(|f| panic!("{f}\nsource:\n{source}"))
    }

    /// `clCreateProgramWithSource` without building.
    pub fn try_program_from_source(&self, source: &str) -> ClResult<Program> {
        let text = source.as_ptr().cast::<c_char>();
        let len = source.len();
        let mut err = 0;
        // SAFETY: one string with an explicit length (need not be NUL-terminated).
        let program =
            unsafe { clCreateProgramWithSource(self.context.raw(), 1, &text, &len, &mut err) };
        check(err, "clCreateProgramWithSource")?;
        // SAFETY: creation succeeded; we own the reference.
        Ok(unsafe { Program::from_raw(program) })
    }

    /// `clCreateProgramWithIL` without building.
    pub fn try_program_from_il(&self, il: &[u8]) -> ClResult<Program> {
        let mut err = 0;
        // SAFETY: `il` is valid for il.len() bytes.
        let program = unsafe {
            clCreateProgramWithIL(self.context.raw(), il.as_ptr().cast(), il.len(), &mut err)
        };
        check(err, "clCreateProgramWithIL")?;
        // SAFETY: creation succeeded; we own the reference.
        Ok(unsafe { Program::from_raw(program) })
    }

    /// `clCreateProgramWithBinary` of one binary for this device, without building
    /// (the binary status is not looked at: the build reports what is wrong).
    pub fn try_program_from_binary(&self, binary: &[u8]) -> ClResult<Program> {
        let (mut status, mut err) = (0, 0);
        let (len, bin) = (binary.len(), binary.as_ptr());
        // SAFETY: one device, one binary of `len` bytes.
        let program = unsafe {
            clCreateProgramWithBinary(
                self.context.raw(),
                1,
                &self.device,
                &len,
                &bin,
                &mut status,
                &mut err,
            )
        };
        check(err, "clCreateProgramWithBinary")?;
        // SAFETY: creation succeeded; we own the reference.
        Ok(unsafe { Program::from_raw(program) })
    }

    /// Creates a program from SPIR-V and builds it; on failure returns the code and log.
    pub fn try_build_il(&self, il: &[u8], options: &str) -> Result<Program, BuildFailure> {
        let program = self.try_program_from_il(il).map_err(|e| BuildFailure {
            code: e.code,
            log: String::new(),
        })?;
        self.try_build_program(program, options)
    }

    /// `clBuildProgram` for this device; on failure the code and build log.
    pub fn try_build_program(
        &self,
        program: Program,
        options: &str,
    ) -> Result<Program, BuildFailure> {
        let opts = CString::new(options).map_err(|_| BuildFailure {
            code: CL_INVALID_BUILD_OPTIONS,
            log: "options contain a NUL byte".to_string(),
        })?;
        // SAFETY: valid program, one device, NUL-terminated options, no callback.
        let code = unsafe {
            clBuildProgram(
                program.raw(),
                1,
                &self.device,
                opts.as_ptr(),
                None,
                ptr::null_mut(),
            )
        };
        if code == CL_SUCCESS as cl_int {
            Ok(program)
        } else {
            Err(BuildFailure {
                code,
                log: self.build_log(&program),
            })
        }
    }

    /// `CL_PROGRAM_BUILD_LOG` for this device (an error text if the query fails).
    pub fn build_log(&self, program: &Program) -> String {
        let query = query_bytes("clGetProgramBuildInfo(CL_PROGRAM_BUILD_LOG)", |n, p, r| {
            // SAFETY: the pointers come from query_bytes.
            unsafe {
                clGetProgramBuildInfo(program.raw(), self.device, CL_PROGRAM_BUILD_LOG, n, p, r)
            }
        });
        match query {
            Ok(bytes) => bytes_to_string("CL_PROGRAM_BUILD_LOG", &bytes),
            Err(e) => format!("<{e}>"),
        }
    }

    /// Builds `source` and creates the kernel `name`; panics on failure.
    pub fn kernel(&self, source: &str, options: &str, name: &str) -> Kernel {
        let program = self.build(source, options);
        program.kernel(name)
    }

    /// A buffer of `bytes` bytes with `flags` and no host pointer.
    pub fn try_buffer(&self, flags: cl_mem_flags, bytes: usize) -> ClResult<Buffer> {
        let mut err = 0;
        // SAFETY: no host pointer.
        let mem =
            unsafe { clCreateBuffer(self.context.raw(), flags, bytes, ptr::null_mut(), &mut err) };
        check(
            err,
            format!("clCreateBuffer({bytes} bytes, flags {flags:#x})"),
        )?;
        // SAFETY: creation succeeded; we own the reference.
        Ok(unsafe { Buffer::from_raw(mem) })
    }

    /// A read-write buffer of `len` values of `T`, zero-filled.
    pub fn buffer_zeroed<T: Pod>(&self, len: usize) -> Buffer {
        self.buffer_from(&vec![T::default(); len.max(1)])
    }

    /// A read-write buffer initialised from `data` (`CL_MEM_COPY_HOST_PTR`).
    pub fn buffer_from<T: Pod>(&self, data: &[T]) -> Buffer {
        self.buffer_with_flags(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, data)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// A buffer created with `flags` and `data` as host pointer. The flags must include
    /// `CL_MEM_COPY_HOST_PTR` (this function cannot keep `data` alive for USE_HOST_PTR).
    pub fn buffer_with_flags<T: Pod>(&self, flags: cl_mem_flags, data: &[T]) -> ClResult<Buffer> {
        assert!(
            flags & CL_MEM_USE_HOST_PTR == 0,
            "USE_HOST_PTR needs storage that outlives the buffer"
        );
        let mut err = 0;
        let bytes = std::mem::size_of_val(data);
        // SAFETY: the driver copies `bytes` bytes from data during the call (COPY_HOST_PTR).
        let mem = unsafe {
            clCreateBuffer(
                self.context.raw(),
                flags,
                bytes,
                data.as_ptr() as *mut c_void,
                &mut err,
            )
        };
        check(
            err,
            format!("clCreateBuffer({bytes} bytes, flags {flags:#x})"),
        )?;
        // SAFETY: creation succeeded; we own the reference.
        Ok(unsafe { Buffer::from_raw(mem) })
    }

    /// A `CL_MEM_USE_HOST_PTR` buffer over fenced memory (reads and writes of the
    /// buffer go straight to `mem` on drivers that do not copy).
    ///
    /// # Safety
    /// `mem` must outlive the buffer and every command that uses it.
    pub unsafe fn buffer_on(&self, mem: &guarded::GuardedMemory) -> Buffer {
        let mut err = 0;
        // SAFETY: mem is valid for mem.len() bytes and outlives the buffer (caller).
        let raw = unsafe {
            clCreateBuffer(
                self.context.raw(),
                CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
                mem.len(),
                mem.as_ptr(),
                &mut err,
            )
        };
        check(err, "clCreateBuffer(USE_HOST_PTR)").unwrap_or_else(|e| panic!("{e}"));
        // SAFETY: creation succeeded; we own the reference.
        unsafe { Buffer::from_raw(raw) }
    }

    /// Blocking read of `len` values of `T` from the start of `buffer`.
    pub fn read<T: Pod>(&self, buffer: &Buffer, len: usize) -> Vec<T> {
        self.try_read_at(buffer, 0, len)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Blocking read of `len` values of `T` starting at byte `offset`.
    pub fn try_read_at<T: Pod>(
        &self,
        buffer: &Buffer,
        offset: usize,
        len: usize,
    ) -> ClResult<Vec<T>> {
        let mut out = vec![T::default(); len];
        let bytes = std::mem::size_of_val(out.as_slice());
        // SAFETY: `out` is valid for `bytes` bytes; blocking read, so it outlives the command.
        let code = unsafe {
            clEnqueueReadBuffer(
                self.queue.raw(),
                buffer.raw(),
                CL_TRUE,
                offset,
                bytes,
                out.as_mut_ptr().cast(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        };
        check(
            code,
            format!("clEnqueueReadBuffer(offset {offset}, {bytes} bytes)"),
        )?;
        Ok(out)
    }

    /// Blocking write of `data` at byte `offset`.
    pub fn write_at<T: Pod>(&self, buffer: &Buffer, offset: usize, data: &[T]) {
        let bytes = std::mem::size_of_val(data);
        // SAFETY: data is valid for `bytes` bytes; blocking write.
        let code = unsafe {
            clEnqueueWriteBuffer(
                self.queue.raw(),
                buffer.raw(),
                CL_TRUE,
                offset,
                bytes,
                data.as_ptr().cast(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        };
        check(
            code,
            format!("clEnqueueWriteBuffer(offset {offset}, {bytes} bytes)"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Enqueues an ND-range (`offset` and `local` optional) without waiting.
    pub fn try_enqueue(
        &self,
        kernel: &Kernel,
        offset: Option<&[usize]>,
        global: &[usize],
        local: Option<&[usize]>,
    ) -> ClResult<Event> {
        if let Some(o) = offset {
            assert_eq!(
                o.len(),
                global.len(),
                "offset and global size dimensions differ"
            );
        }
        if let Some(l) = local {
            assert_eq!(
                l.len(),
                global.len(),
                "local and global size dimensions differ"
            );
        }
        let mut event: cl_event = ptr::null_mut();
        // SAFETY: the size arrays have work_dim elements (checked above) or are NULL.
        let code = unsafe {
            clEnqueueNDRangeKernel(
                self.queue.raw(),
                kernel.raw(),
                global.len() as cl_uint,
                offset.map_or(ptr::null(), |o| o.as_ptr()),
                global.as_ptr(),
                local.map_or(ptr::null(), |l| l.as_ptr()),
                0,
                ptr::null(),
                &mut event,
            )
        };
        check(
            code,
            format!(
                "clEnqueueNDRangeKernel(global {global:?}, local {local:?}, offset {offset:?})"
            ),
        )?;
        // SAFETY: the enqueue succeeded and returned an event we own.
        Ok(unsafe { Event::from_raw(event) })
    }

    /// Runs an ND-range and waits for the queue to drain; panics on failure.
    pub fn run(&self, kernel: &Kernel, global: &[usize], local: Option<&[usize]>) {
        self.run_offset(kernel, None, global, local);
    }

    /// Runs an ND-range with a global offset and waits; panics on failure.
    pub fn run_offset(
        &self,
        kernel: &Kernel,
        offset: Option<&[usize]>,
        global: &[usize],
        local: Option<&[usize]>,
    ) {
        let event = self
            .try_enqueue(kernel, offset, global, local)
            .unwrap_or_else(|e| panic!("{e}"));
        event.wait().unwrap_or_else(|e| panic!("{e}"));
        self.finish();
    }

    /// `clFinish` on the queue; panics on failure.
    pub fn finish(&self) {
        // SAFETY: valid queue.
        check(unsafe { clFinish(self.queue.raw()) }, "clFinish").unwrap_or_else(|e| panic!("{e}"));
    }
}

impl Program {
    /// `clCreateKernel`, returning the error code on failure.
    pub fn try_kernel(&self, name: &str) -> ClResult<Kernel> {
        let cname = CString::new(name).map_err(|_| ClError {
            code: CL_INVALID_VALUE,
            call: format!("kernel name {name:?} contains NUL"),
        })?;
        let mut err = 0;
        // SAFETY: valid program and NUL-terminated name.
        let kernel = unsafe { clCreateKernel(self.raw(), cname.as_ptr(), &mut err) };
        check(err, format!("clCreateKernel({name})"))?;
        // SAFETY: creation succeeded; we own the reference.
        Ok(unsafe { Kernel::from_raw(kernel) })
    }

    /// `clCreateKernel`; panics on failure.
    pub fn kernel(&self, name: &str) -> Kernel {
        self.try_kernel(name).unwrap_or_else(|e| panic!("{e}"))
    }

    /// `clGetProgramInfo` as bytes.
    pub fn info_bytes(&self, param: cl_uint) -> ClResult<Vec<u8>> {
        query_bytes(&format!("clGetProgramInfo({param:#x})"), |n, p, r| {
            // SAFETY: the pointers come from query_bytes.
            unsafe { clGetProgramInfo(self.raw(), param, n, p, r) }
        })
    }
}

impl Kernel {
    /// `clSetKernelArg` with a value (scalar, vector, struct) or raw bytes.
    pub fn try_set_arg_bytes(&self, index: u32, bytes: Option<&[u8]>, size: usize) -> ClResult<()> {
        let value = bytes.map_or(ptr::null(), |b| b.as_ptr().cast::<c_void>());
        // SAFETY: `value` is NULL or valid for `size` bytes (callers pass b.len()).
        let code = unsafe { clSetKernelArg(self.raw(), index, size, value) };
        check(code, format!("clSetKernelArg(index {index}, size {size})"))
    }

    /// Sets argument `index` to a value of Pod type `T`; panics on failure.
    pub fn arg<T: Pod>(&self, index: u32, value: T) -> &Self {
        let bytes = as_bytes(std::slice::from_ref(&value));
        self.try_set_arg_bytes(index, Some(bytes), bytes.len())
            .unwrap_or_else(|e| panic!("{e}"));
        self
    }

    /// Sets argument `index` to a buffer; panics on failure.
    pub fn arg_buffer(&self, index: u32, buffer: &Buffer) -> &Self {
        let raw = buffer.raw();
        // SAFETY: passes a pointer to the cl_mem handle, as the API specifies.
        let code = unsafe {
            clSetKernelArg(
                self.raw(),
                index,
                std::mem::size_of::<cl_mem>(),
                (&raw as *const cl_mem).cast(),
            )
        };
        check(code, format!("clSetKernelArg(index {index}, buffer)"))
            .unwrap_or_else(|e| panic!("{e}"));
        self
    }

    /// Sets `__local` argument `index` to `bytes` bytes; panics on failure.
    pub fn arg_local(&self, index: u32, bytes: usize) -> &Self {
        self.try_set_arg_bytes(index, None, bytes)
            .unwrap_or_else(|e| panic!("{e}"));
        self
    }

    /// `clGetKernelWorkGroupInfo` for a fixed-size parameter.
    pub fn work_group_info<T: Pod>(&self, device: cl_device_id, param: cl_uint) -> ClResult<T> {
        query_value(
            &format!("clGetKernelWorkGroupInfo({param:#x})"),
            |n, p, r| {
                // SAFETY: the pointers come from query_bytes.
                unsafe { clGetKernelWorkGroupInfo(self.raw(), device, param, n, p, r) }
            },
        )
    }

    /// `clGetKernelSubGroupInfo` with an input value, for a fixed-size result.
    pub fn sub_group_info<T: Pod>(
        &self,
        device: cl_device_id,
        param: cl_uint,
        input: &[usize],
    ) -> ClResult<T> {
        query_value(
            &format!("clGetKernelSubGroupInfo({param:#x}, {input:?})"),
            |n, p, r| {
                // SAFETY: `input` is valid for its byte length; the rest come from query_bytes.
                unsafe {
                    clGetKernelSubGroupInfo(
                        self.raw(),
                        device,
                        param,
                        std::mem::size_of_val(input),
                        input.as_ptr().cast(),
                        n,
                        p,
                        r,
                    )
                }
            },
        )
    }
}

impl Event {
    /// `clWaitForEvents` on this event alone.
    pub fn wait(&self) -> ClResult<()> {
        let raw = self.raw();
        // SAFETY: one valid event.
        check(unsafe { clWaitForEvents(1, &raw) }, "clWaitForEvents")
    }

    /// `CL_EVENT_COMMAND_EXECUTION_STATUS`.
    pub fn status(&self) -> ClResult<cl_int> {
        query_value(
            "clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)",
            |n, p, r| {
                // SAFETY: the pointers come from query_bytes.
                unsafe { clGetEventInfo(self.raw(), CL_EVENT_COMMAND_EXECUTION_STATUS, n, p, r) }
            },
        )
    }
}

/// Reads a C string returned by the driver (for direct-call tests).
///
/// # Safety
/// `ptr` must be NULL or point to a NUL-terminated string.
pub unsafe fn c_str_lossy(ptr: *const c_char) -> Option<String> {
    if ptr.is_null() {
        None
    } else {
        // SAFETY: the caller guarantees a NUL-terminated string.
        Some(
            unsafe { CStr::from_ptr(ptr) }
                .to_string_lossy()
                .into_owned(),
        )
    }
}

/// A deterministic pseudo-random sequence (xorshift64*) for test inputs.
#[derive(Clone, Debug)]
pub struct TestRng(u64);

impl TestRng {
    /// A generator from a non-zero seed.
    pub fn new(seed: u64) -> Self {
        TestRng(seed.max(1))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// A float uniformly in `[lo, hi)`.
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u32() >> 8) as f32 / (1u32 << 24) as f32;
        lo + (hi - lo) * unit
    }

    /// A vector of `n` values made by `f`.
    pub fn vec<T>(&mut self, n: usize, mut f: impl FnMut(&mut Self) -> T) -> Vec<T> {
        (0..n).map(|_| f(self)).collect()
    }
}

/// Distance in units in the last place between two floats (0 if both are NaN).
pub fn ulp_distance_f32(a: f32, b: f32) -> u64 {
    if a.is_nan() && b.is_nan() || a == b {
        return 0;
    }
    if a.is_nan() || b.is_nan() {
        return u64::MAX;
    }
    let key = |x: f32| -> i64 {
        let bits = x.to_bits() as i32;
        (if bits < 0 {
            i32::MIN.wrapping_sub(bits)
        } else {
            bits
        }) as i64
    };
    (key(a) - key(b)).unsigned_abs()
}

/// Distance in units in the last place between two doubles (0 if both are NaN).
pub fn ulp_distance_f64(a: f64, b: f64) -> u64 {
    if a.is_nan() && b.is_nan() || a == b {
        return 0;
    }
    if a.is_nan() || b.is_nan() {
        return u64::MAX;
    }
    let key = |x: f64| -> i128 {
        let bits = x.to_bits() as i64;
        (if bits < 0 {
            i64::MIN.wrapping_sub(bits)
        } else {
            bits
        }) as i128
    };
    u64::try_from((key(a) - key(b)).unsigned_abs()).unwrap_or(u64::MAX)
}

/// Builds `source`, runs kernel `name` over `global` work-items with `args` (buffers
/// in order), and returns nothing; results are read from the buffers by the caller.
pub fn run_with_buffers(
    ctx: &DeviceContext,
    source: &str,
    options: &str,
    name: &str,
    args: &[&Buffer],
    global: &[usize],
    local: Option<&[usize]>,
) {
    let kernel = ctx.kernel(source, options, name);
    for (i, b) in args.iter().enumerate() {
        kernel.arg_buffer(i as u32, b);
    }
    ctx.run(&kernel, global, local);
}

/// Environment variable that marks a re-executed test binary (see [`run_in_child`]).
pub const CHILD_MARKER: &str = "CRANECL_CONFORMANCE_CHILD";

/// Whether this process is a child started by [`run_in_child`] for test `name`.
pub fn is_child_for(name: &str) -> bool {
    std::env::var(CHILD_MARKER).as_deref() == Ok(name)
}

/// Whether this process is any child started by [`run_in_child`].
pub fn is_child() -> bool {
    std::env::var_os(CHILD_MARKER).is_some()
}

/// Re-executes the current test binary running only test `name`, with extra
/// environment variables (the driver reads its configuration once per process, and
/// environment variables are process-global). Panics with the child's output if it
/// fails or does not print `CHILD-OK`.
pub fn run_in_child(name: &str, env: &[(&str, &str)]) {
    child_stdout(name, env);
}

/// [`run_in_child`], returning everything the child wrote to its standard output
/// (the driver's printf output among it).
pub fn child_stdout(name: &str, env: &[(&str, &str)]) -> Vec<u8> {
    let exe = std::env::current_exe().expect("test binary path");
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD_MARKER, name);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("re-executing the test binary for {name}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("CHILD-OK"),
        "child {name} with {env:?} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    out.stdout
}
