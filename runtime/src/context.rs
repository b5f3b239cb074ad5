//! Contexts: a set of devices (the CPU device and/or its sub-devices), the properties the
//! application gave, and destructor callbacks run when the last reference goes.

use std::ffi::c_void;
use std::sync::Arc;

use crate::sync::Mutex;
use opencl_sys::*;

use crate::callback::{run_object_callbacks, Callback, ContextNotifyFn, ObjectNotifyFn};
use crate::object::{ApiHeader, ApiObject, ObjectKind};
use crate::platform::Device;
use crate::svm::SvmRegistry;

/// An OpenCL context.
#[repr(C)]
pub struct Context {
    header: ApiHeader,
    /// The devices of the context (never empty).
    pub devices: Vec<Arc<Device>>,
    /// The property list as given (zero-terminated), for `CL_CONTEXT_PROPERTIES`.
    pub properties: Vec<cl_context_properties>,
    /// The `pfn_notify` of clCreateContext (kept; asynchronous errors are not reported yet).
    pub notify: Option<Callback<ContextNotifyFn>>,
    destructors: Mutex<Vec<Callback<ObjectNotifyFn>>>,
    /// Shared virtual memory allocated in this context.
    pub svm: SvmRegistry,
}

impl ApiObject for Context {
    const KIND: ObjectKind = ObjectKind::Context;
    fn header(&self) -> &ApiHeader {
        &self.header
    }
}

impl Context {
    /// A context over `devices` (validated by the caller: non-empty, ours).
    pub fn new(
        devices: Vec<Arc<Device>>,
        properties: Vec<cl_context_properties>,
        notify: Option<Callback<ContextNotifyFn>>,
    ) -> Arc<Context> {
        Arc::new(Context {
            header: ApiHeader::new(ObjectKind::Context),
            devices,
            properties,
            notify,
            destructors: Mutex::new(Vec::new()),
            svm: SvmRegistry::default(),
        })
    }

    /// Whether `device` belongs to this context.
    pub fn has_device(&self, device: &Device) -> bool {
        self.devices
            .iter()
            .any(|d| std::ptr::eq(Arc::as_ptr(d), device))
    }

    /// Reports an asynchronous error through the `pfn_notify` of clCreateContext
    /// (nothing if the application gave none).
    pub fn report_error(&self, message: &str) {
        if let Some(cb) = self.notify {
            let text = std::ffi::CString::new(message.replace('\0', " ")).unwrap_or_default();
            // SAFETY: the application registered `func` for (errinfo, private_info, cb,
            // user_data); the string lives across the call.
            unsafe { (cb.func)(text.as_ptr(), std::ptr::null(), 0, cb.user_data) };
        }
    }

    /// `clSetContextDestructorCallback`.
    pub fn add_destructor(&self, cb: Callback<ObjectNotifyFn>) {
        self.destructors.lock().push(cb);
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        let callbacks = std::mem::take(self.destructors.get_mut());
        run_object_callbacks(callbacks, (self as *mut Context).cast::<c_void>());
    }
}
