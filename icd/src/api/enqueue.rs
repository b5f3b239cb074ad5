//! Every `clEnqueue*` entry point: validation, then one runtime [`Command`].

use cranecl_runtime::event::Event;
use cranecl_runtime::memory::Mem;
use cranecl_runtime::queue::{Command, HostPtr, Queue, RectCopy};

use cranecl_runtime::kernel::Kernel;

use super::prelude::*;

/// The queue, its validated wait list, and the event out-parameter of one call.
struct Enqueue {
    queue: Arc<Queue>,
    wait: Vec<Arc<Event>>,
    event_out: *mut cl_event,
}

impl Enqueue {
    fn new(
        queue: cl_command_queue,
        num_events: cl_uint,
        events: *const cl_event,
        event_out: *mut cl_event,
    ) -> CLResult<Enqueue> {
        let queue = get::<Queue>(queue)?;
        // On-device queues take only kernels' enqueue_kernel.
        if queue.on_device() {
            return Err(CL_INVALID_COMMAND_QUEUE);
        }
        let wait = handle::wait_list(events, num_events, &queue.context)?;
        Ok(Enqueue {
            queue,
            wait,
            event_out,
        })
    }

    /// A buffer argument: valid handle of the queue's context (a pipe is not a
    /// buffer: the host may not read, write, copy, fill or map it).
    fn mem(&self, mem: cl_mem) -> CLResult<Arc<Mem>> {
        let m = self.mem_object(mem)?;
        if m.is_pipe() {
            return Err(CL_INVALID_MEM_OBJECT);
        }
        Ok(m)
    }

    /// Any memory object (buffer or pipe) of the queue's context.
    fn mem_object(&self, mem: cl_mem) -> CLResult<Arc<Mem>> {
        let m = get::<Mem>(mem)?;
        if !Arc::ptr_eq(&m.context, &self.queue.context) {
            return Err(CL_INVALID_CONTEXT);
        }
        Ok(m)
    }

    fn submit(
        self,
        command_type: cl_command_type,
        command: Command,
        blocking: bool,
    ) -> CLResult<()> {
        let event = self
            .queue
            .enqueue(command_type, command, &self.wait, blocking)?;
        handle::return_event(event, self.event_out);
        Ok(())
    }
}

fn check_host_read(mem: &Mem) -> CLResult<()> {
    if mem.flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS) != 0 {
        return Err(CL_INVALID_OPERATION);
    }
    Ok(())
}

fn check_host_write(mem: &Mem) -> CLResult<()> {
    if mem.flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS) != 0 {
        return Err(CL_INVALID_OPERATION);
    }
    Ok(())
}

/// A host pointer the command reads or writes `len` bytes at: non-NULL, and the
/// range must not wrap around the address space.
fn host_ptr(p: *const c_void, len: usize) -> CLResult<HostPtr> {
    util::host_range(p, len)?;
    Ok(HostPtr(p.cast_mut().cast()))
}

/// The bytes `[offset, offset + size)` of `mem`, `size` possibly 0 (OpenCL 3.0 names
/// no error for an empty read, write, copy or fill: the command still orders the
/// queue and completes its event).
fn in_bounds(mem: &Mem, offset: usize, size: usize) -> CLResult<()> {
    if !mem.range_ok(offset, size) {
        return Err(CL_INVALID_VALUE);
    }
    Ok(())
}

cl_entry! {
    fn clEnqueueReadBuffer(
        command_queue: cl_command_queue,
        buffer: cl_mem,
        blocking_read: cl_bool,
        offset: size_t,
        size: size_t,
        ptr: *mut c_void,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let e = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list, event)?;
        let mem = e.mem(buffer)?;
        let dst = host_ptr(ptr, size)?;
        in_bounds(&mem, offset, size)?;
        check_host_read(&mem)?;
        e.submit(CL_COMMAND_READ_BUFFER, Command::Read { mem, offset, size, dst }, blocking_read != CL_FALSE)
    }
}

cl_entry! {
    fn clEnqueueWriteBuffer(
        command_queue: cl_command_queue,
        buffer: cl_mem,
        blocking_write: cl_bool,
        offset: size_t,
        size: size_t,
        ptr: *const c_void,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let e = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list, event)?;
        let mem = e.mem(buffer)?;
        let src = host_ptr(ptr, size)?;
        in_bounds(&mem, offset, size)?;
        check_host_write(&mem)?;
        e.submit(CL_COMMAND_WRITE_BUFFER, Command::Write { mem, offset, size, src }, blocking_write != CL_FALSE)
    }
}

cl_entry! {
    fn clEnqueueCopyBuffer(
        command_queue: cl_command_queue,
        src_buffer: cl_mem,
        dst_buffer: cl_mem,
        src_offset: size_t,
        dst_offset: size_t,
        size: size_t,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let e = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list, event)?;
        let src = e.mem(src_buffer)?;
        let dst = e.mem(dst_buffer)?;
        in_bounds(&src, src_offset, size)?;
        in_bounds(&dst, dst_offset, size)?;
        if src.overlaps(src_offset, &dst, dst_offset, size) {
            return Err(CL_MEM_COPY_OVERLAP);
        }
        e.submit(CL_COMMAND_COPY_BUFFER, Command::Copy { src, src_offset, dst, dst_offset, size }, false)
    }
}

cl_entry! {
    fn clEnqueueFillBuffer(
        command_queue: cl_command_queue,
        buffer: cl_mem,
        pattern: *const c_void,
        pattern_size: size_t,
        offset: size_t,
        size: size_t,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let e = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list, event)?;
        let mem = e.mem(buffer)?;
        if pattern.is_null() || !pattern_size.is_power_of_two() || pattern_size > 128 {
            return Err(CL_INVALID_VALUE);
        }
        if !offset.is_multiple_of(pattern_size) || !size.is_multiple_of(pattern_size) {
            return Err(CL_INVALID_VALUE);
        }
        in_bounds(&mem, offset, size)?;
        let pattern = util::slice(pattern.cast::<u8>(), pattern_size)?.to_vec();
        e.submit(CL_COMMAND_FILL_BUFFER, Command::Fill { mem, pattern, offset, size }, false)
    }
}

/// A rect side's extent, which must exist (no overflow) and fit in `size` bytes.
fn rect_fits(extent: Option<usize>, size: usize) -> CLResult<usize> {
    extent.filter(|e| *e <= size).ok_or(CL_INVALID_VALUE)
}

/// Reads a 3-element `size_t` array (`CL_INVALID_VALUE` for NULL).
fn triple(p: *const size_t) -> CLResult<[usize; 3]> {
    let s = util::slice(p, 3)?;
    Ok([s[0], s[1], s[2]])
}

/// Builds and checks a rect copy: pitches default as the spec says; `src`/`dst` sizes
/// bound the extents when known (buffers).
#[allow(clippy::too_many_arguments)]
fn rect(
    src_origin: [usize; 3],
    dst_origin: [usize; 3],
    region: [usize; 3],
    src_row: usize,
    src_slice: usize,
    dst_row: usize,
    dst_slice: usize,
) -> CLResult<RectCopy> {
    if region.contains(&0) {
        return Err(CL_INVALID_VALUE);
    }
    let pitch = |row: usize, slice: usize| -> CLResult<(usize, usize)> {
        let row = if row == 0 { region[0] } else { row };
        let plane = region[1].checked_mul(row).ok_or(CL_INVALID_VALUE)?;
        let slice = if slice == 0 { plane } else { slice };
        if row < region[0] || slice < plane || slice % row != 0 {
            return Err(CL_INVALID_VALUE);
        }
        Ok((row, slice))
    };
    let (src_row_pitch, src_slice_pitch) = pitch(src_row, src_slice)?;
    let (dst_row_pitch, dst_slice_pitch) = pitch(dst_row, dst_slice)?;
    Ok(RectCopy {
        src_origin,
        dst_origin,
        region,
        src_row_pitch,
        src_slice_pitch,
        dst_row_pitch,
        dst_slice_pitch,
    })
}

cl_entry! {
    fn clEnqueueReadBufferRect(
        command_queue: cl_command_queue,
        buffer: cl_mem,
        blocking_read: cl_bool,
        buffer_origin: *const size_t,
        host_origin: *const size_t,
        region: *const size_t,
        buffer_row_pitch: size_t,
        buffer_slice_pitch: size_t,
        host_row_pitch: size_t,
        host_slice_pitch: size_t,
        ptr: *mut c_void,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let e = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list, event)?;
        let mem = e.mem(buffer)?;
        let r = rect(triple(buffer_origin)?, triple(host_origin)?, triple(region)?,
            buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch)?;
        rect_fits(r.src_extent(), mem.size)?;
        let dst = host_ptr(ptr, r.dst_extent().ok_or(CL_INVALID_VALUE)?)?;
        check_host_read(&mem)?;
        e.submit(CL_COMMAND_READ_BUFFER_RECT, Command::ReadRect { mem, rect: r, dst }, blocking_read != CL_FALSE)
    }
}

cl_entry! {
    fn clEnqueueWriteBufferRect(
        command_queue: cl_command_queue,
        buffer: cl_mem,
        blocking_write: cl_bool,
        buffer_origin: *const size_t,
        host_origin: *const size_t,
        region: *const size_t,
        buffer_row_pitch: size_t,
        buffer_slice_pitch: size_t,
        host_row_pitch: size_t,
        host_slice_pitch: size_t,
        ptr: *const c_void,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let e = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list, event)?;
        let mem = e.mem(buffer)?;
        let r = rect(triple(host_origin)?, triple(buffer_origin)?, triple(region)?,
            host_row_pitch, host_slice_pitch, buffer_row_pitch, buffer_slice_pitch)?;
        rect_fits(r.dst_extent(), mem.size)?;
        let src = host_ptr(ptr, r.src_extent().ok_or(CL_INVALID_VALUE)?)?;
        check_host_write(&mem)?;
        e.submit(CL_COMMAND_WRITE_BUFFER_RECT, Command::WriteRect { mem, rect: r, src }, blocking_write != CL_FALSE)
    }
}

cl_entry! {
    fn clEnqueueCopyBufferRect(
        command_queue: cl_command_queue,
        src_buffer: cl_mem,
        dst_buffer: cl_mem,
        src_origin: *const size_t,
        dst_origin: *const size_t,
        region: *const size_t,
        src_row_pitch: size_t,
        src_slice_pitch: size_t,
        dst_row_pitch: size_t,
        dst_slice_pitch: size_t,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let e = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list, event)?;
        let src = e.mem(src_buffer)?;
        let dst = e.mem(dst_buffer)?;
        let r = rect(triple(src_origin)?, triple(dst_origin)?, triple(region)?,
            src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch)?;
        let a_end = rect_fits(r.src_extent(), src.size)?;
        let b_end = rect_fits(r.dst_extent(), dst.size)?;
        if Arc::ptr_eq(&src, &dst) {
            if r.src_row_pitch != r.dst_row_pitch || r.src_slice_pitch != r.dst_slice_pitch {
                return Err(CL_INVALID_VALUE);
            }
            // No overflow: each start is below its extent.
            let start = |o: [usize; 3]| o[2] * r.src_slice_pitch + o[1] * r.src_row_pitch + o[0];
            let (a, b) = (start(r.src_origin), start(r.dst_origin));
            if a < b_end && b < a_end {
                return Err(CL_MEM_COPY_OVERLAP);
            }
        }
        e.submit(CL_COMMAND_COPY_BUFFER_RECT, Command::CopyRect { src, dst, rect: r }, false)
    }
}

cl_entry! {
    fn clEnqueueMapBuffer(
        command_queue: cl_command_queue,
        buffer: cl_mem,
        blocking_map: cl_bool,
        map_flags: cl_map_flags,
        offset: size_t,
        size: size_t,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event;
        errcode_ret
    ) -> *mut c_void {
        let e = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list, event)?;
        let mem = e.mem(buffer)?;
        if size == 0 || !mem.range_ok(offset, size) {
            return Err(CL_INVALID_VALUE);
        }
        let known = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
        if map_flags & !known != 0
            || (map_flags & CL_MAP_WRITE_INVALIDATE_REGION != 0 && map_flags & (CL_MAP_READ | CL_MAP_WRITE) != 0)
        {
            return Err(CL_INVALID_VALUE);
        }
        if map_flags & CL_MAP_READ != 0 {
            check_host_read(&mem)?;
        }
        if map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0 {
            check_host_write(&mem)?;
        }
        // SAFETY: `offset` is inside the buffer (checked above).
        let ptr = unsafe { mem.ptr().add(offset) };
        mem.note_mapped();
        let command = Command::Nothing { keep: Some(mem.clone()) };
        if let Err(code) = e.submit(CL_COMMAND_MAP_BUFFER, command, blocking_map != CL_FALSE) {
            mem.note_unmapped();
            return Err(code);
        }
        Ok(ptr.cast())
    }
}

cl_entry! {
    fn clEnqueueUnmapMemObject(
        command_queue: cl_command_queue,
        memobj: cl_mem,
        mapped_ptr: *mut c_void,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let e = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list, event)?;
        let mem = e.mem(memobj)?;
        let base = mem.ptr() as usize;
        let p = mapped_ptr as usize;
        if p < base || p > base + mem.size || !mem.note_unmapped() {
            return Err(CL_INVALID_VALUE);
        }
        e.submit(CL_COMMAND_UNMAP_MEM_OBJECT, Command::Nothing { keep: Some(mem) }, false)
    }
}

cl_entry! {
    fn clEnqueueMigrateMemObjects(
        command_queue: cl_command_queue,
        num_mem_objects: cl_uint,
        mem_objects: *const cl_mem,
        flags: cl_mem_migration_flags,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let e = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list, event)?;
        if num_mem_objects == 0 || mem_objects.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        if flags & !(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED) != 0 {
            return Err(CL_INVALID_VALUE);
        }
        for m in util::slice(mem_objects, num_mem_objects as usize)? {
            e.mem_object(*m)?;
        }
        e.submit(CL_COMMAND_MIGRATE_MEM_OBJECTS, Command::Nothing { keep: None }, false)
    }
}

cl_entry! {
    fn clEnqueueMarkerWithWaitList(
        command_queue: cl_command_queue,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let e = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list, event)?;
        e.submit(CL_COMMAND_MARKER, Command::Nothing { keep: None }, false)
    }
}

cl_entry! {
    fn clEnqueueBarrierWithWaitList(
        command_queue: cl_command_queue,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let e = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list, event)?;
        e.submit(CL_COMMAND_BARRIER, Command::Nothing { keep: None }, false)
    }
}

cl_entry! {
    fn clEnqueueMarker(command_queue: cl_command_queue, event: *mut cl_event) -> cl_int {
        if event.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let e = Enqueue::new(command_queue, 0, std::ptr::null(), event)?;
        e.submit(CL_COMMAND_MARKER, Command::Nothing { keep: None }, false)
    }
}

cl_entry! {
    fn clEnqueueBarrier(command_queue: cl_command_queue) -> cl_int {
        let e = Enqueue::new(command_queue, 0, std::ptr::null(), std::ptr::null_mut())?;
        e.submit(CL_COMMAND_BARRIER, Command::Nothing { keep: None }, false)
    }
}

cl_entry! {
    fn clEnqueueWaitForEvents(command_queue: cl_command_queue, num_events: cl_uint, event_list: *const cl_event) -> cl_int {
        if num_events == 0 || event_list.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let e = Enqueue::new(command_queue, num_events, event_list, std::ptr::null_mut())
            .map_err(|c| if c == CL_INVALID_EVENT_WAIT_LIST { CL_INVALID_EVENT } else { c })?;
        e.submit(CL_COMMAND_BARRIER, Command::Nothing { keep: None }, false)
    }
}

fn enqueue_kernel(
    e: Enqueue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    offset: Option<[usize; 3]>,
    global: [usize; 3],
    local: Option<[usize; 3]>,
) -> CLResult<()> {
    let k = get::<Kernel>(kernel)?;
    if !Arc::ptr_eq(&k.program.context, &e.queue.context) {
        return Err(CL_INVALID_CONTEXT);
    }
    let ndrange = k.ndrange(&e.queue.device, work_dim, offset, global, local)?;
    let run = k.launch(&e.queue.device, ndrange)?;
    if run
        .buffers
        .iter()
        .any(|b| !Arc::ptr_eq(&b.context, &e.queue.context))
    {
        return Err(CL_INVALID_CONTEXT);
    }
    let empty = ndrange.global_size[..work_dim as usize].contains(&0);
    let command = if empty {
        Command::Nothing { keep: None }
    } else {
        run.into_command()
    };
    e.submit(CL_COMMAND_NDRANGE_KERNEL, command, false)
}

/// Up to three `size_t` values (`work_dim` of them; the rest `fill`).
fn dims(p: *const size_t, work_dim: cl_uint, fill: usize) -> CLResult<[usize; 3]> {
    let s = util::slice(p, work_dim as usize)?;
    let mut out = [fill; 3];
    out[..s.len()].copy_from_slice(s);
    Ok(out)
}

cl_entry! {
    fn clEnqueueNDRangeKernel(
        command_queue: cl_command_queue,
        kernel: cl_kernel,
        work_dim: cl_uint,
        global_work_offset: *const size_t,
        global_work_size: *const size_t,
        local_work_size: *const size_t,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let e = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list, event)?;
        get::<Kernel>(kernel)?;
        if !(1..=3).contains(&work_dim) {
            return Err(CL_INVALID_WORK_DIMENSION);
        }
        // OpenCL >= 2.1: a NULL or zero global size is a no-op that still orders the
        // queue and completes its event.
        let global = if global_work_size.is_null() {
            [0; 3]
        } else {
            dims(global_work_size, work_dim, 1)?
        };
        let offset = if global_work_offset.is_null() { None } else { Some(dims(global_work_offset, work_dim, 0)?) };
        let local = if local_work_size.is_null() { None } else { Some(dims(local_work_size, work_dim, 1)?) };
        enqueue_kernel(e, kernel, work_dim, offset, global, local)
    }
}

cl_entry! {
    fn clEnqueueTask(
        command_queue: cl_command_queue,
        kernel: cl_kernel,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let e = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list, event)?;
        enqueue_kernel(e, kernel, 1, None, [1, 1, 1], Some([1, 1, 1]))
    }
}

fn suggested_local_size(
    command_queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const size_t,
    global_work_size: *const size_t,
    suggested_local_work_size: *mut size_t,
) -> CLResult<()> {
    let q = get::<Queue>(command_queue)?;
    let k = get::<cranecl_runtime::kernel::Kernel>(kernel)?;
    if !Arc::ptr_eq(&k.program.context, &q.context) {
        return Err(CL_INVALID_CONTEXT);
    }
    if !(1..=3).contains(&work_dim) {
        return Err(CL_INVALID_WORK_DIMENSION);
    }
    if global_work_size.is_null() || suggested_local_work_size.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    let global = dims(global_work_size, work_dim, 1)?;
    if global[..work_dim as usize].contains(&0) {
        return Err(CL_INVALID_GLOBAL_WORK_SIZE);
    }
    let offset = if global_work_offset.is_null() {
        None
    } else {
        Some(dims(global_work_offset, work_dim, 0)?)
    };
    let nd = k.ndrange(&q.device, work_dim, offset, global, None)?;
    for (d, v) in nd.local_size.iter().take(work_dim as usize).enumerate() {
        // SAFETY: the application provides `work_dim` writable entries.
        unsafe { suggested_local_work_size.add(d).write(*v) };
    }
    Ok(())
}

cl_entry! {
    fn clGetKernelSuggestedLocalWorkSize(
        command_queue: cl_command_queue,
        kernel: cl_kernel,
        work_dim: cl_uint,
        global_work_offset: *const size_t,
        global_work_size: *const size_t,
        suggested_local_work_size: *mut size_t
    ) -> cl_int {
        suggested_local_size(command_queue, kernel, work_dim, global_work_offset, global_work_size, suggested_local_work_size)
    }
}

cl_entry! {
    fn clGetKernelSuggestedLocalWorkSizeKHR(
        command_queue: cl_command_queue,
        kernel: cl_kernel,
        work_dim: cl_uint,
        global_work_offset: *const size_t,
        global_work_size: *const size_t,
        suggested_local_work_size: *mut size_t
    ) -> cl_int {
        suggested_local_size(command_queue, kernel, work_dim, global_work_offset, global_work_size, suggested_local_work_size)
    }
}

/// The user function of `clEnqueueNativeKernel` (`CL_EXEC_NATIVE_KERNEL`).
type NativeFn = unsafe extern "C" fn(*mut c_void);

/// A copy of `clEnqueueNativeKernel`'s argument block: made at enqueue time (the
/// application may reuse its block at once), with each memory object's device pointer
/// written where the application had put its handle.
struct NativeArgs(Vec<u8>);

// SAFETY: the block holds plain bytes (device pointers of buffers the command keeps
// alive); the user function it is handed to runs on one thread at a time.
unsafe impl Send for NativeArgs {}

cl_entry! {
    fn clEnqueueNativeKernel(
        command_queue: cl_command_queue,
        user_func: Option<NativeFn>,
        args: *mut c_void,
        cb_args: size_t,
        num_mem_objects: cl_uint,
        mem_list: *const cl_mem,
        args_mem_loc: *mut *const c_void,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event
    ) -> cl_int {
        let e = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list, event)?;
        let func = user_func.ok_or(CL_INVALID_VALUE)?;
        let n = num_mem_objects as usize;
        if args.is_null() != (cb_args == 0) || (args.is_null() && n > 0) {
            return Err(CL_INVALID_VALUE);
        }
        let lists_given = [mem_list.is_null(), args_mem_loc.is_null()].map(|null| !null);
        if (n > 0 && lists_given != [true, true]) || (n == 0 && lists_given != [false, false]) {
            return Err(CL_INVALID_VALUE);
        }
        let mut block = if cb_args == 0 {
            Vec::new()
        } else {
            util::host_range(args, cb_args)?;
            util::slice(args.cast::<u8>().cast_const(), cb_args)?.to_vec()
        };
        let handles = util::slice(mem_list, n)?;
        let locations = util::slice(args_mem_loc.cast_const(), n)?;
        let mut mems = Vec::with_capacity(n);
        for (&h, &loc) in handles.iter().zip(locations) {
            let mem = get::<Mem>(h).map_err(|_| CL_INVALID_MEM_OBJECT)?;
            if mem.is_pipe() {
                return Err(CL_INVALID_MEM_OBJECT);
            }
            if !Arc::ptr_eq(&mem.context, &e.queue.context) {
                return Err(CL_INVALID_CONTEXT);
            }
            // Where in the block the handle was: a whole pointer inside `args`.
            let at = (loc as usize)
                .checked_sub(args as usize)
                .filter(|at| {
                    at.checked_add(std::mem::size_of::<*mut u8>())
                        .is_some_and(|end| end <= cb_args)
                })
                .ok_or(CL_INVALID_VALUE)?;
            let ptr = mem.ptr() as usize;
            block[at..at + std::mem::size_of::<usize>()].copy_from_slice(&ptr.to_ne_bytes());
            mems.push(mem);
        }
        let mut block = NativeArgs(block);
        let command = Command::Host(Box::new(move || {
            let args = if block.0.is_empty() {
                std::ptr::null_mut()
            } else {
                block.0.as_mut_ptr().cast::<c_void>()
            };
            // SAFETY: the application's function, called as the spec says with a copy
            // of its argument block whose memory-object slots hold device pointers of
            // buffers kept alive by `mems` until it returns.
            unsafe { func(args) };
            drop(mems);
            Ok(())
        }));
        e.submit(CL_COMMAND_NATIVE_KERNEL, command, false)
    }
}
