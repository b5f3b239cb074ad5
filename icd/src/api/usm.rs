//! cl_intel_unified_shared_memory: host, device and shared allocations (all host
//! memory on this device), their queries, kernel arguments and enqueued copies/fills.
//! These are extension functions, reached through clGetExtensionFunctionAddress*.

use cranecl_runtime::context::Context;
use cranecl_runtime::event::Event;
use cranecl_runtime::platform::Device;
use cranecl_runtime::queue::{Command, HostPtr, Queue};
use cranecl_runtime::svm::AllocKind;

use super::prelude::*;

/// `CL_DEVICE_*_MEM_CAPABILITIES_INTEL` for host, device and shared allocations.
pub const USM_CAPABILITIES: cl_device_unified_shared_memory_capabilities_intel =
    CL_UNIFIED_SHARED_MEMORY_ACCESS_INTEL | CL_UNIFIED_SHARED_MEMORY_CONCURRENT_ACCESS_INTEL;

fn usm_alloc(
    context: cl_context,
    device: Option<cl_device_id>,
    properties: *const cl_mem_properties_intel,
    size: usize,
    alignment: cl_uint,
    kind: AllocKind,
) -> CLResult<*mut c_void> {
    let ctx = get::<Context>(context)?;
    if let Some(d) = device {
        let d = get::<Device>(d)?;
        if !ctx.has_device(&d) {
            return Err(CL_INVALID_DEVICE);
        }
    }
    for pair in util::property_list(properties)?.chunks_exact(2) {
        match pair[0] {
            CL_MEM_ALLOC_FLAGS_INTEL => {
                let known = CL_MEM_ALLOC_WRITE_COMBINED_INTEL
                    | CL_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE_INTEL
                    | CL_MEM_ALLOC_INITIAL_PLACEMENT_HOST_INTEL;
                if pair[1] & !known != 0 {
                    return Err(CL_INVALID_PROPERTY);
                }
            }
            _ => return Err(CL_INVALID_PROPERTY),
        }
    }
    let max = ctx
        .devices
        .iter()
        .map(|d| d.max_mem_alloc_size)
        .min()
        .unwrap_or(0);
    if size == 0 || size as u64 > max {
        return Err(CL_INVALID_BUFFER_SIZE);
    }
    let align = alignment as usize;
    if align != 0 && (!align.is_power_of_two() || align > cranecl_runtime::svm::MAX_ALIGNMENT) {
        return Err(CL_INVALID_VALUE);
    }
    ctx.svm
        .alloc(size, align, max, kind)
        .map(|p| p.cast())
        .ok_or(CL_OUT_OF_RESOURCES)
}

cl_entry! {
    fn clHostMemAllocINTEL(
        context: cl_context,
        properties: *const cl_mem_properties_intel,
        size: size_t,
        alignment: cl_uint;
        errcode_ret
    ) -> *mut c_void {
        usm_alloc(context, None, properties, size, alignment, AllocKind::UsmHost)
    }
}

cl_entry! {
    fn clDeviceMemAllocINTEL(
        context: cl_context,
        device: cl_device_id,
        properties: *const cl_mem_properties_intel,
        size: size_t,
        alignment: cl_uint;
        errcode_ret
    ) -> *mut c_void {
        usm_alloc(context, Some(device), properties, size, alignment, AllocKind::UsmDevice)
    }
}

cl_entry! {
    fn clSharedMemAllocINTEL(
        context: cl_context,
        device: cl_device_id,
        properties: *const cl_mem_properties_intel,
        size: size_t,
        alignment: cl_uint;
        errcode_ret
    ) -> *mut c_void {
        let device = if device.is_null() { None } else { Some(device) };
        usm_alloc(context, device, properties, size, alignment, AllocKind::UsmShared)
    }
}

fn usm_free(context: cl_context, ptr: *mut c_void) -> CLResult<()> {
    let ctx = get::<Context>(context)?;
    if ptr.is_null() {
        return Ok(());
    }
    if ctx.svm.free(ptr as usize) {
        Ok(())
    } else {
        Err(CL_INVALID_VALUE)
    }
}

cl_entry! {
    fn clMemFreeINTEL(context: cl_context, ptr: *mut c_void) -> cl_int {
        usm_free(context, ptr)
    }
}

cl_entry! {
    fn clMemBlockingFreeINTEL(context: cl_context, ptr: *mut c_void) -> cl_int {
        // Commands using the memory are the application's to finish first; the free
        // itself is immediate.
        usm_free(context, ptr)
    }
}

cl_entry! {
    fn clGetMemAllocInfoINTEL(
        context: cl_context,
        ptr: *const c_void,
        param_name: cl_mem_info_intel,
        param_value_size: size_t,
        param_value: *mut c_void,
        param_value_size_ret: *mut size_t
    ) -> cl_int {
        let ctx = get::<Context>(context)?;
        let found = ctx.svm.find_kind(ptr.cast());
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_MEM_ALLOC_TYPE_INTEL => out.value::<cl_unified_shared_memory_type_intel>(match found {
                Some((_, _, AllocKind::UsmHost)) => CL_MEM_TYPE_HOST_INTEL,
                Some((_, _, AllocKind::UsmDevice)) => CL_MEM_TYPE_DEVICE_INTEL,
                Some((_, _, AllocKind::UsmShared)) => CL_MEM_TYPE_SHARED_INTEL,
                _ => CL_MEM_TYPE_UNKNOWN_INTEL,
            }),
            CL_MEM_ALLOC_BASE_PTR_INTEL => out.value(found.map_or(std::ptr::null_mut(), |f| f.0 as *mut c_void)),
            CL_MEM_ALLOC_SIZE_INTEL => out.value::<usize>(found.map_or(0, |f| f.1)),
            CL_MEM_ALLOC_DEVICE_INTEL => out.value::<cl_device_id>(match found {
                Some((_, _, AllocKind::UsmDevice | AllocKind::UsmShared)) => handle_of(&ctx.devices[0]),
                _ => std::ptr::null_mut(),
            }),
            p if cl_mem_properties_intel::from(p) == CL_MEM_ALLOC_FLAGS_INTEL => {
                out.value::<cl_mem_alloc_flags_intel>(0)
            }
            _ => Err(CL_INVALID_VALUE),
        }
    }
}

cl_entry! {
    fn clSetKernelArgMemPointerINTEL(kernel: cl_kernel, arg_index: cl_uint, arg_value: *const c_void) -> cl_int {
        super::svm::set_pointer_arg(kernel, arg_index, arg_value)
    }
}

fn enqueue(
    command_queue: cl_command_queue,
    num_events: cl_uint,
    events: *const cl_event,
    event: *mut cl_event,
    command_type: cl_command_type,
    blocking: bool,
    make: impl FnOnce() -> CLResult<Command>,
) -> CLResult<()> {
    let q = get::<Queue>(command_queue)?;
    let wait: Vec<Arc<Event>> = handle::wait_list(events, num_events, &q.context)?;
    let command = make()?;
    let e = q.enqueue(command_type, command, &wait, blocking)?;
    handle::return_event(e, event);
    Ok(())
}

fn fill(dst: *mut c_void, pattern: &[u8], size: usize) -> CLResult<Command> {
    let n = pattern.len();
    util::host_range(dst, size)?;
    if !n.is_power_of_two() || n > 128 || !size.is_multiple_of(n) {
        return Err(CL_INVALID_VALUE);
    }
    Ok(Command::HostFill {
        dst: HostPtr(dst.cast()),
        pattern: pattern.to_vec(),
        size,
    })
}

cl_entry! {
    fn clEnqueueMemFillINTEL(
        command_queue: cl_command_queue,
        dst_ptr: *mut c_void,
        pattern: *const c_void,
        pattern_size: size_t,
        size: size_t,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        enqueue(command_queue, num_events_in_wait_list, event_wait_list, event, CL_COMMAND_MEMFILL_INTEL, false, || {
            if pattern.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            fill(dst_ptr, util::slice(pattern.cast::<u8>(), pattern_size)?, size)
        })
    }
}

cl_entry! {
    fn clEnqueueMemsetINTEL(
        command_queue: cl_command_queue,
        dst_ptr: *mut c_void,
        value: cl_int,
        size: size_t,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        enqueue(command_queue, num_events_in_wait_list, event_wait_list, event, CL_COMMAND_MEMFILL_INTEL, false, || {
            fill(dst_ptr, &[value as u8], size)
        })
    }
}

cl_entry! {
    fn clEnqueueMemcpyINTEL(
        command_queue: cl_command_queue,
        blocking: cl_bool,
        dst_ptr: *mut c_void,
        src_ptr: *const c_void,
        size: size_t,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        enqueue(command_queue, num_events_in_wait_list, event_wait_list, event, CL_COMMAND_MEMCPY_INTEL, blocking != CL_FALSE, || {
            util::host_range(dst_ptr, size)?;
            util::host_range(src_ptr, size)?;
            let (d, s) = (dst_ptr as usize, src_ptr as usize);
            if d < s + size && s < d + size {
                return Err(CL_MEM_COPY_OVERLAP);
            }
            Ok(Command::HostCopy { dst: HostPtr(dst_ptr.cast()), src: HostPtr(src_ptr.cast_mut().cast()), size })
        })
    }
}

cl_entry! {
    fn clEnqueueMigrateMemINTEL(
        command_queue: cl_command_queue,
        ptr: *const c_void,
        size: size_t,
        flags: cl_mem_migration_flags,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        enqueue(command_queue, num_events_in_wait_list, event_wait_list, event, CL_COMMAND_MIGRATEMEM_INTEL, false, || {
            if ptr.is_null() || flags & !(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED) != 0 {
                return Err(CL_INVALID_VALUE);
            }
            let _ = size;
            Ok(Command::Nothing { keep: None })
        })
    }
}

cl_entry! {
    fn clEnqueueMemAdviseINTEL(
        command_queue: cl_command_queue,
        ptr: *const c_void,
        size: size_t,
        advice: cl_mem_advice_intel,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        enqueue(command_queue, num_events_in_wait_list, event_wait_list, event, CL_COMMAND_MEMADVISE_INTEL, false, || {
            if ptr.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let _ = (size, advice);
            Ok(Command::Nothing { keep: None })
        })
    }
}
