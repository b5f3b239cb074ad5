//! The ICD dispatch table and the name -> entry point lookup, both generated from one
//! slot list (`dispatch_slots.rs`, in opencl-sys' `_cl_icd_dispatch` order).
//!
//! Every slot holds a function (ocl-icd calls slots without NULL checks); slots 0 and
//! 31 hold `CL_ICD2_TAG_KHR`, which tells cl_khr_icd 2.0 loaders that objects carry
//! loader dispatch data in their second pointer (loaders that predate 2.0 never call
//! those two slots through a platform).

use std::ffi::c_void;
use std::sync::LazyLock;

use opencl_sys::cl_icd::_cl_icd_dispatch;

use crate::api;

/// `CL_ICD2_TAG_KHR` (64-bit value: "OPENCL31").
pub const ICD2_TAG: usize = 0x4F50_454E_434C_3331;

macro_rules! slot_value {
    (fn $name:ident) => {
        Some(api::$name)
    };
    (tag $name:ident) => {
        // SAFETY: the slot is never called; a function pointer only has to be non-null,
        // which the tag is. cl_khr_icd 2.0 defines this value for these slots.
        Some(unsafe { std::mem::transmute::<usize, _>(ICD2_TAG) })
    };
    (raw $name:ident) => {
        api::$name as *const () as usize as libc::intptr_t
    };
}

macro_rules! dispatch_slots {
    ($($kind:ident $field:ident = $name:ident,)*) => {
        /// The dispatch table every object's header points to.
        #[allow(clippy::missing_transmute_annotations)]
        pub static DISPATCH: LazyLock<_cl_icd_dispatch> =
            LazyLock::new(|| _cl_icd_dispatch { $($field: slot_value!($kind $name),)* });

        /// The entry point named `name` (clGetExtensionFunctionAddress*,
        /// clIcdGetFunctionAddressForPlatformKHR), or null.
        pub fn lookup(name: &str) -> *mut c_void {
            match name {
                $(stringify!($name) => api::$name as *const () as *mut c_void,)*
                "clIcdGetPlatformIDsKHR" => api::clIcdGetPlatformIDsKHR as *const () as *mut c_void,
                "clGetKernelSuggestedLocalWorkSizeKHR" => {
                    api::clGetKernelSuggestedLocalWorkSizeKHR as *const () as *mut c_void
                }
                "clHostMemAllocINTEL" => api::clHostMemAllocINTEL as *const () as *mut c_void,
                "clDeviceMemAllocINTEL" => api::clDeviceMemAllocINTEL as *const () as *mut c_void,
                "clSharedMemAllocINTEL" => api::clSharedMemAllocINTEL as *const () as *mut c_void,
                "clMemFreeINTEL" => api::clMemFreeINTEL as *const () as *mut c_void,
                "clMemBlockingFreeINTEL" => api::clMemBlockingFreeINTEL as *const () as *mut c_void,
                "clGetMemAllocInfoINTEL" => api::clGetMemAllocInfoINTEL as *const () as *mut c_void,
                "clSetKernelArgMemPointerINTEL" => {
                    api::clSetKernelArgMemPointerINTEL as *const () as *mut c_void
                }
                "clEnqueueMemFillINTEL" => api::clEnqueueMemFillINTEL as *const () as *mut c_void,
                "clEnqueueMemsetINTEL" => api::clEnqueueMemsetINTEL as *const () as *mut c_void,
                "clEnqueueMemcpyINTEL" => api::clEnqueueMemcpyINTEL as *const () as *mut c_void,
                "clEnqueueMigrateMemINTEL" => api::clEnqueueMigrateMemINTEL as *const () as *mut c_void,
                "clEnqueueMemAdviseINTEL" => api::clEnqueueMemAdviseINTEL as *const () as *mut c_void,
                "clIcdSetPlatformDispatchDataKHR" => api::clIcdSetPlatformDispatchDataKHR as *const () as *mut c_void,
                "clIcdGetFunctionAddressForPlatformKHR" => {
                    api::clIcdGetFunctionAddressForPlatformKHR as *const () as *mut c_void
                }
                _ => std::ptr::null_mut(),
            }
        }

        /// Every entry point name in slot order (tests).
        #[cfg(test)]
        pub const SLOT_NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}

include!("dispatch_slots.rs");

/// The table's address, as stored in object headers.
pub fn table() -> *const c_void {
    let table: &_cl_icd_dispatch = &DISPATCH;
    (table as *const _cl_icd_dispatch).cast()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layout_matches_the_c_header() {
        assert_eq!(size_of::<_cl_icd_dispatch>(), 150 * size_of::<usize>());
        assert_eq!(SLOT_NAMES.len(), 150);
        let p = size_of::<usize>();
        assert_eq!(offset_of!(_cl_icd_dispatch, clGetPlatformInfo), p);
        assert_eq!(offset_of!(_cl_icd_dispatch, clCreateBuffer), 14 * p);
        assert_eq!(offset_of!(_cl_icd_dispatch, clUnloadCompiler), 31 * p);
        assert_eq!(offset_of!(_cl_icd_dispatch, clEnqueueNDRangeKernel), 59 * p);
        assert_eq!(offset_of!(_cl_icd_dispatch, clSetEventCallback), 81 * p);
        assert_eq!(
            offset_of!(_cl_icd_dispatch, clCreateCommandQueueWithProperties),
            123 * p
        );
        assert_eq!(offset_of!(_cl_icd_dispatch, clCreateProgramWithIL), 138 * p);
        assert_eq!(
            offset_of!(_cl_icd_dispatch, clSetContextDestructorCallback),
            148 * p
        );
    }

    #[test]
    fn every_slot_is_filled_and_found_by_name() {
        let words: &[usize; 150] = unsafe { &*(table() as *const [usize; 150]) };
        assert!(words.iter().all(|w| *w != 0));
        assert_eq!(words[0], ICD2_TAG);
        assert_eq!(words[31], ICD2_TAG);
        for (i, name) in SLOT_NAMES.iter().enumerate() {
            let f = lookup(name);
            assert!(!f.is_null(), "{name}");
            if i != 0 && i != 31 {
                assert_eq!(words[i], f as usize, "slot {i} ({name})");
            }
        }
        assert!(lookup("clNoSuchFunction").is_null());
    }
}
