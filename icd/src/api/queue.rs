//! Command-queue entry points: host queues (in-order or out-of-order, profiling
//! optional) and on-device queues for device-side enqueue (`CL_QUEUE_ON_DEVICE`,
//! runtime `device_enqueue`).

use cranecl_runtime::device_enqueue;
use cranecl_runtime::features;
use cranecl_runtime::object::ApiObject;
use cranecl_runtime::queue::Queue;

use cranecl_runtime::context::Context;
use cranecl_runtime::platform::Device;

use super::prelude::*;

fn create_queue(
    context: cl_context,
    device: cl_device_id,
    properties: cl_command_queue_properties,
    array: Vec<cl_queue_properties>,
    size: Option<u64>,
) -> CLResult<cl_command_queue> {
    // clCreateCommandQueue (no property list) cannot create on-device queues.
    let host_only = array.is_empty() && size.is_none();
    let ctx = get::<Context>(context)?;
    let dev = get::<Device>(device)?;
    if !ctx.has_device(&dev) {
        return Err(CL_INVALID_DEVICE);
    }
    let known = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE
        | CL_QUEUE_PROFILING_ENABLE
        | CL_QUEUE_ON_DEVICE
        | CL_QUEUE_ON_DEVICE_DEFAULT;
    if properties & !known != 0 {
        return Err(CL_INVALID_VALUE);
    }
    if properties & CL_QUEUE_ON_DEVICE_DEFAULT != 0 && properties & CL_QUEUE_ON_DEVICE == 0 {
        return Err(CL_INVALID_VALUE);
    }
    if properties & CL_QUEUE_ON_DEVICE != 0 {
        if host_only || !device_enqueue_supported() {
            return Err(CL_INVALID_QUEUE_PROPERTIES);
        }
        // On-device queues are out-of-order only: anything else is an invalid value
        // (as Intel's CPU runtime answers).
        if properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE == 0 {
            return Err(CL_INVALID_VALUE);
        }
        let size = size.unwrap_or(u64::from(device_enqueue::PREFERRED_QUEUE_SIZE));
        if size > u64::from(device_enqueue::MAX_QUEUE_SIZE) {
            return Err(CL_INVALID_VALUE);
        }
        // There is one default device queue: asking for it again returns it, with one
        // more reference.
        if properties & CL_QUEUE_ON_DEVICE_DEFAULT != 0 {
            if let Some(existing) = device_enqueue::default_of(&ctx, &dev) {
                let h = handle_of(&existing);
                handle::retain::<Queue>(h)?;
                return Ok(h);
            }
        }
        let q =
            cranecl_runtime::device_enqueue::new_queue(ctx, dev, properties, array, size as u32);
        return Ok(new_handle(q));
    }
    Ok(new_handle(Queue::new(ctx, dev, properties, array)))
}

cl_entry! {
    fn clCreateCommandQueue(
        context: cl_context,
        device: cl_device_id,
        properties: cl_command_queue_properties;
        errcode_ret
    ) -> cl_command_queue {
        create_queue(context, device, properties, Vec::new(), None)
    }
}

cl_entry! {
    fn clCreateCommandQueueWithProperties(
        context: cl_context,
        device: cl_device_id,
        properties: *const cl_queue_properties;
        errcode_ret
    ) -> cl_command_queue {
        let list = util::property_list(properties).map_err(|_| CL_INVALID_VALUE)?;
        let mut bits: cl_command_queue_properties = 0;
        let mut size = None;
        let mut seen = Vec::new();
        for pair in list.chunks_exact(2) {
            if seen.contains(&pair[0]) {
                return Err(CL_INVALID_VALUE);
            }
            seen.push(pair[0]);
            match pair[0] as cl_uint {
                CL_QUEUE_PROPERTIES => bits = pair[1],
                CL_QUEUE_SIZE => size = Some(pair[1]),
                _ => return Err(CL_INVALID_VALUE),
            }
        }
        if size.is_some() && bits & CL_QUEUE_ON_DEVICE == 0 {
            return Err(CL_INVALID_VALUE);
        }
        let mut array = list.to_vec();
        if !array.is_empty() {
            array.push(0);
        }
        create_queue(context, device, bits, array, size)
    }
}

cl_entry! {
    fn clRetainCommandQueue(command_queue: cl_command_queue) -> cl_int {
        handle::retain::<Queue>(command_queue)
    }
}

cl_entry! {
    fn clReleaseCommandQueue(command_queue: cl_command_queue) -> cl_int {
        get::<Queue>(command_queue)?.flush();
        handle::release::<Queue>(command_queue)
    }
}

cl_entry! {
    fn clGetCommandQueueInfo(
        command_queue: cl_command_queue,
        param_name: cl_command_queue_info,
        param_value_size: size_t,
        param_value: *mut c_void,
        param_value_size_ret: *mut size_t
    ) -> cl_int {
        let q = get::<Queue>(command_queue)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_QUEUE_CONTEXT => out.value(handle_of(&q.context)),
            CL_QUEUE_DEVICE => out.value(handle_of(&q.device)),
            CL_QUEUE_REFERENCE_COUNT => out.value::<cl_uint>(q.header().api_refs()),
            CL_QUEUE_PROPERTIES => out.value(q.properties),
            CL_QUEUE_PROPERTIES_ARRAY => out.array(&q.properties_array),
            CL_QUEUE_DEVICE_DEFAULT => out.value::<cl_command_queue>(
                device_enqueue::default_of(&q.context, &q.device)
                    .map_or(std::ptr::null_mut(), |d| handle_of(&d)),
            ),
            CL_QUEUE_SIZE if q.on_device() => out.value::<cl_uint>(q.queue_size),
            CL_QUEUE_SIZE => Err(CL_INVALID_COMMAND_QUEUE),
            _ => Err(CL_INVALID_VALUE),
        }
    }
}

cl_entry! {
    fn clFlush(command_queue: cl_command_queue) -> cl_int {
        get::<Queue>(command_queue)?.flush();
        Ok(())
    }
}

cl_entry! {
    fn clFinish(command_queue: cl_command_queue) -> cl_int {
        get::<Queue>(command_queue)?.finish();
        Ok(())
    }
}

/// Whether the device claims `__opencl_c_device_enqueue` (on-device queues exist).
fn device_enqueue_supported() -> bool {
    features::has_feature("__opencl_c_device_enqueue")
}

cl_entry! {
    fn clSetDefaultDeviceCommandQueue(
        context: cl_context,
        device: cl_device_id,
        command_queue: cl_command_queue
    ) -> cl_int {
        let ctx = get::<Context>(context)?;
        let dev = get::<Device>(device)?;
        if !ctx.has_device(&dev) {
            return Err(CL_INVALID_DEVICE);
        }
        if !device_enqueue_supported() {
            return Err(CL_INVALID_OPERATION);
        }
        let q = get::<Queue>(command_queue)?;
        if !q.on_device() || !Arc::ptr_eq(&q.context, &ctx) || !Arc::ptr_eq(&q.device, &dev) {
            return Err(CL_INVALID_COMMAND_QUEUE);
        }
        device_enqueue::set_default(&q);
        Ok(())
    }
}
