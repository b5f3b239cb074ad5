//! The platform and its CPU device (plus the sub-devices partitioned from it):
//! identity strings and the limits every query and every validation reads.
//!
//! The platform and the root device are process-wide singletons created on first
//! use and never freed; sub-devices live as long as a reference to them does.
//! Numbers here must describe what really works (see `features` for the claimed
//! extensions); the C layer turns them into `clGetPlatformInfo` / `clGetDeviceInfo`.

use std::sync::{Arc, OnceLock};

use crate::exec;
use crate::object::{ApiHeader, ApiObject, ObjectKind};

/// Platform and device name, vendor and ICD suffix.
pub const NAME: &str = "cranecl";
/// Vendor string of platform and device.
pub const VENDOR: &str = "cranecl";
/// `CL_PLATFORM_ICD_SUFFIX_KHR`.
pub const ICD_SUFFIX: &str = "cranecl";
/// The OpenCL API version of platform and device (`CL_*_NUMERIC_VERSION`), as
/// (major, minor, patch). OpenCL 3.1: everything 3.0 requires plus OpenCL C 3.1,
/// SPIR-V 1.0-1.4, sub-groups and the nine extensions 3.1 makes mandatory (see
/// ARCHITECTURE.md, "OpenCL 3.1"). The version strings below must agree with it.
pub const API_VERSION: (u32, u32, u32) = (3, 1, 0);
/// `CL_PLATFORM_VERSION`.
pub const PLATFORM_VERSION: &str = "OpenCL 3.1 cranecl";
/// `CL_DEVICE_VERSION`.
pub const DEVICE_VERSION: &str = "OpenCL 3.1 cranecl";
/// `CL_DRIVER_VERSION`: the crate version plus the git commit it was built from, so
/// binary caches keyed by it (pyopencl's) are invalidated by every driver change.
pub const DRIVER_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+", env!("CRANECL_BUILD_ID"));
/// `CL_DEVICE_OPENCL_C_VERSION`.
pub const OPENCL_C_VERSION: &str = "OpenCL C 1.2 cranecl";
/// `CL_*_PROFILE`.
pub const PROFILE: &str = "FULL_PROFILE";

/// Largest work-group.
pub const MAX_WORK_GROUP_SIZE: usize = 1024;
/// Per-dimension limits of a work-group.
pub const MAX_WORK_ITEM_SIZES: [usize; 3] = [1024, 1024, 1024];
/// `CL_DEVICE_LOCAL_MEM_SIZE` (bytes of `__local` per work-group). 128 KiB: each worker
/// thread's block is sized to what a launch needs, so the limit costs nothing, and
/// applications size work-groups by it (pyopencl's radix sort picks work-groups of 12
/// under 64 KiB, of 16, as on Intel's CPU runtime with its 256 KiB, from about 75 KiB
/// on). Not more: the CTS async-copy tests size their work-groups by it (their run
/// time grows with it; at 256 KiB async_strided_copy_global_to_local passed 300 s
/// under load).
pub const LOCAL_MEM_SIZE: u64 = 128 * 1024;
/// `CL_DEVICE_MEM_BASE_ADDR_ALIGN` in bits; buffers are allocated with this alignment.
pub const MEM_BASE_ADDR_ALIGN_BITS: u32 = 1024;
/// Alignment of buffer storage in bytes.
pub const BUFFER_ALIGN: usize = (MEM_BASE_ADDR_ALIGN_BITS / 8) as usize;
/// `CL_DEVICE_MAX_PARAMETER_SIZE`.
pub const MAX_PARAMETER_SIZE: usize = 1024;
/// `CL_DEVICE_PRINTF_BUFFER_SIZE`: the record buffer each launch of a kernel that
/// calls printf gets (see [`crate::printf`]).
pub const PRINTF_BUFFER_SIZE: usize = 1024 * 1024;
/// `CL_DEVICE_MAX_CONSTANT_ARGS`.
pub const MAX_CONSTANT_ARGS: u32 = 8;

/// The only platform.
#[repr(C)]
pub struct Platform {
    header: ApiHeader,
    device: Arc<Device>,
}

impl ApiObject for Platform {
    const KIND: ObjectKind = ObjectKind::Platform;
    fn header(&self) -> &ApiHeader {
        &self.header
    }
}

impl Platform {
    /// The platform singleton.
    pub fn get() -> &'static Arc<Platform> {
        static PLATFORM: OnceLock<Arc<Platform>> = OnceLock::new();
        PLATFORM.get_or_init(|| {
            Arc::new(Platform {
                header: ApiHeader::new(ObjectKind::Platform),
                device: Arc::new(Device::new()),
            })
        })
    }

    /// The CPU device.
    pub fn device(&self) -> &Arc<Device> {
        &self.device
    }

    /// Re-stamps the headers of the static objects (after the C layer registered its
    /// dispatch table or the loader set cl_khr_icd 2.0 dispatch data).
    pub fn refresh_dispatch(&self) {
        self.header.refresh_dispatch();
        self.device.header.refresh_dispatch();
    }
}

/// The CPU device (the root device, a process-wide singleton) or a sub-device
/// partitioned from it ([`crate::partition`]): its limits, computed once.
#[repr(C)]
pub struct Device {
    header: ApiHeader,
    /// `CL_DEVICE_MAX_COMPUTE_UNITS`: `units.len()`.
    pub compute_units: u32,
    /// `CL_DEVICE_GLOBAL_MEM_SIZE`: physical RAM.
    pub global_mem_size: u64,
    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE`.
    pub max_mem_alloc_size: u64,
    /// `CL_DEVICE_NAME`: the host CPU's model name when it can be read.
    pub name: String,
    /// The root device's compute units (`0..root.compute_units`) this device owns, in
    /// order; a launch on it runs on at most this many threads.
    pub units: Vec<u32>,
    /// `CL_DEVICE_PARENT_DEVICE` (an implicit reference); `None` for the root device.
    pub parent: Option<Arc<Device>>,
    /// `CL_DEVICE_PARTITION_TYPE`: the property list the device was created with,
    /// terminator included (the domain chosen for
    /// `CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE`); empty for the root device.
    pub partition_type: Vec<opencl_sys::cl_device_partition_property>,
}

impl ApiObject for Device {
    const KIND: ObjectKind = ObjectKind::Device;
    fn header(&self) -> &ApiHeader {
        &self.header
    }
}

impl Device {
    fn new() -> Device {
        let global = physical_memory().unwrap_or(4 << 30);
        // A quarter of RAM (the OpenCL minimum is max(1/4 global, 128 MiB)), at least 128 MiB.
        let max_alloc = (global / 4).max(128 << 20).min(global);
        let compute_units = u32::try_from(exec::num_workers()).unwrap_or(u32::MAX);
        Device {
            header: ApiHeader::new(ObjectKind::Device),
            compute_units,
            global_mem_size: global,
            max_mem_alloc_size: max_alloc,
            name: cpu_model_name().map_or_else(|| NAME.to_string(), |m| format!("cranecl {m}")),
            units: (0..compute_units).collect(),
            parent: None,
            partition_type: Vec::new(),
        }
    }

    /// A sub-device of `parent` owning `units` (a non-empty subset of the parent's),
    /// created with `partition_type`; the application holds one reference.
    pub(crate) fn sub_device(
        parent: &Arc<Device>,
        units: Vec<u32>,
        partition_type: Vec<opencl_sys::cl_device_partition_property>,
    ) -> Arc<Device> {
        Arc::new(Device {
            header: ApiHeader::new(ObjectKind::Device),
            compute_units: u32::try_from(units.len()).unwrap_or(u32::MAX),
            global_mem_size: parent.global_mem_size,
            max_mem_alloc_size: parent.max_mem_alloc_size,
            name: parent.name.clone(),
            units,
            parent: Some(Arc::clone(parent)),
            partition_type,
        })
    }

    /// Whether this is the root device (retain/release are no-ops on it).
    pub fn is_root(&self) -> bool {
        self.parent.is_none()
    }

    /// Whether this device is `ancestor` or was partitioned (directly or not) from it.
    pub fn is_within(&self, ancestor: &Device) -> bool {
        let mut d = self;
        loop {
            if std::ptr::eq(d, ancestor) {
                return true;
            }
            match &d.parent {
                Some(p) => d = p,
                None => return false,
            }
        }
    }

    /// Threads a launch on this device may use: its compute units.
    pub fn threads(&self) -> usize {
        self.units.len().max(1)
    }

    /// `CL_DEVICE_UUID_KHR`: derived from the CPU model and the compute units the
    /// device owns, so it is the same in every process and driver version.
    pub fn uuid(&self) -> [u8; 16] {
        let units: Vec<u8> = self.units.iter().flat_map(|u| u.to_le_bytes()).collect();
        let root = if self.is_root() { &b"root"[..] } else { b"sub" };
        uuid_of(&[b"device", self.name.as_bytes(), root, &units])
    }
}

/// `CL_DRIVER_UUID_KHR`: derived from `CL_DRIVER_VERSION` (which names the commit).
pub fn driver_uuid() -> [u8; 16] {
    uuid_of(&[b"driver", DRIVER_VERSION.as_bytes()])
}

/// A name-based UUID (RFC 9562 version 8) of `fields`: two stable 64-bit hashes.
fn uuid_of(fields: &[&[u8]]) -> [u8; 16] {
    let hash = |seed: &[u8]| {
        fields
            .iter()
            .fold(crate::build::Fnv::new().bytes(seed), |h, f| h.bytes(f))
            .finish()
    };
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&hash(b"cranecl-uuid-0").to_be_bytes());
    id[8..].copy_from_slice(&hash(b"cranecl-uuid-1").to_be_bytes());
    id[6] = (id[6] & 0x0f) | 0x80;
    id[8] = (id[8] & 0x3f) | 0x80;
    id
}

/// Physical RAM in bytes (sysconf).
fn physical_memory() -> Option<u64> {
    // SAFETY: sysconf has no preconditions; it only reads system configuration.
    let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
    // SAFETY: as above.
    let page_size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if pages <= 0 || page_size <= 0 {
        return None;
    }
    (pages as u64).checked_mul(page_size as u64)
}

/// The CPU's model name from /proc/cpuinfo (Linux), if present.
fn cpu_model_name() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Nanoseconds of `CLOCK_MONOTONIC`: the device and host timer and the profiling clock.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}
