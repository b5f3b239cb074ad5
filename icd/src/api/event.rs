//! Event entry points: info, profiling, user events, callbacks, waiting.

use cranecl_runtime::callback::{Callback, EventNotifyFn};
use cranecl_runtime::event::{self, Event, Timestamp};
use cranecl_runtime::object::ApiObject;
use cranecl_runtime::queue::Queue;

use cranecl_runtime::context::Context;

use super::prelude::*;

cl_entry! {
    fn clWaitForEvents(num_events: cl_uint, event_list: *const cl_event) -> cl_int {
        if num_events == 0 || event_list.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let events = handle::list::<Event>(event_list, num_events, CL_INVALID_VALUE)?;
        if events.iter().any(|e| !Arc::ptr_eq(&e.context, &events[0].context)) {
            return Err(CL_INVALID_CONTEXT);
        }
        event::wait_all(&events)
    }
}

cl_entry! {
    fn clGetEventInfo(
        event: cl_event,
        param_name: cl_event_info,
        param_value_size: size_t,
        param_value: *mut c_void,
        param_value_size_ret: *mut size_t
    ) -> cl_int {
        let e = get::<Event>(event)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_EVENT_COMMAND_QUEUE => {
                out.value(Queue::of_event(&e).as_ref().map_or(std::ptr::null_mut(), handle_of))
            }
            CL_EVENT_CONTEXT => out.value(handle_of(&e.context)),
            CL_EVENT_COMMAND_TYPE => out.value::<cl_command_type>(e.command_type),
            CL_EVENT_COMMAND_EXECUTION_STATUS => out.value::<cl_int>(e.status()),
            CL_EVENT_REFERENCE_COUNT => out.value::<cl_uint>(e.header().api_refs()),
            _ => Err(CL_INVALID_VALUE),
        }
    }
}

cl_entry! {
    fn clGetEventProfilingInfo(
        event: cl_event,
        param_name: cl_profiling_info,
        param_value_size: size_t,
        param_value: *mut c_void,
        param_value_size_ret: *mut size_t
    ) -> cl_int {
        let e = get::<Event>(event)?;
        let profiled = e.queue.as_ref().is_some_and(|q| q.profiling());
        if !profiled || !e.is_finished() {
            return Err(CL_PROFILING_INFO_NOT_AVAILABLE);
        }
        let which = match param_name {
            CL_PROFILING_COMMAND_QUEUED => Timestamp::Queued,
            CL_PROFILING_COMMAND_SUBMIT => Timestamp::Submitted,
            CL_PROFILING_COMMAND_START => Timestamp::Started,
            CL_PROFILING_COMMAND_END | CL_PROFILING_COMMAND_COMPLETE => Timestamp::Ended,
            _ => return Err(CL_INVALID_VALUE),
        };
        InfoOut::new(param_value_size, param_value, param_value_size_ret).value::<cl_ulong>(e.time(which))
    }
}

cl_entry! {
    fn clRetainEvent(event: cl_event) -> cl_int {
        handle::retain::<Event>(event)
    }
}

cl_entry! {
    fn clReleaseEvent(event: cl_event) -> cl_int {
        handle::release::<Event>(event)
    }
}

cl_entry! {
    fn clCreateUserEvent(context: cl_context; errcode_ret) -> cl_event {
        Ok(new_handle(Event::new_user(get::<Context>(context)?)))
    }
}

cl_entry! {
    fn clSetUserEventStatus(event: cl_event, execution_status: cl_int) -> cl_int {
        let e = get::<Event>(event)?;
        if e.command_type != CL_COMMAND_USER {
            return Err(CL_INVALID_EVENT);
        }
        if execution_status > CL_COMPLETE {
            return Err(CL_INVALID_VALUE);
        }
        if e.is_finished() {
            return Err(CL_INVALID_OPERATION);
        }
        e.set_status(execution_status);
        Ok(())
    }
}

cl_entry! {
    fn clSetEventCallback(
        event: cl_event,
        command_exec_callback_type: cl_int,
        pfn_notify: Option<unsafe extern "C" fn(event: cl_event, event_command_status: cl_int, user_data: *mut c_void)>,
        user_data: *mut c_void
    ) -> cl_int {
        let e = get::<Event>(event)?;
        let func = pfn_notify.ok_or(CL_INVALID_VALUE)?;
        if ![CL_SUBMITTED, CL_RUNNING, CL_COMPLETE].contains(&command_exec_callback_type) {
            return Err(CL_INVALID_VALUE);
        }
        let func: EventNotifyFn = func;
        e.add_callback(command_exec_callback_type, Callback { func, user_data });
        Ok(())
    }
}
