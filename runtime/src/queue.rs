//! Command queues and commands.
//!
//! A command is a value ([`Command`]) paired with its event. An in-order queue chains
//! each command after the previous one; an out-of-order queue only after its latest
//! barrier (markers and barriers without a wait list wait for every outstanding
//! command); every command also waits for its wait list. No
//! thread blocks on a dependency: every dependency gets a completion hook that counts
//! down, and the last one hands the command to the shared pool ([`exec::spawn`]) — or,
//! for a blocking call whose dependencies are already done, runs it on the caller's
//! thread. The enqueue path takes only this queue's locks, briefly.
//!
//! Work-helping: a command handed to the pool is also listed in its queue's ready
//! list, and a thread that waits for the queue (`clFinish`, `clWaitForEvents`, a
//! blocking read) runs listed commands that no worker has started yet itself instead
//! of sleeping until a worker gets to them; whoever takes a command first runs it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Instant;

use crate::sync::Mutex;
use opencl_sys::*;

use crate::context::Context;
use crate::event::{CommandQueue, Dependent, Event, WAIT_SPIN};
use crate::exec;
use crate::memory::Mem;
use crate::object::{ApiHeader, ApiObject, ObjectKind};
use crate::platform::{Device, PRINTF_BUFFER_SIZE};
use crate::printf;
use crate::CLResult;

/// A host pointer given to a read/write command; the application keeps it valid until
/// the command completes (the OpenCL rule for non-blocking transfers).
#[derive(Clone, Copy, Debug)]
pub struct HostPtr(pub *mut u8);

// SAFETY: the pointer is only used by the one command it was given to, under the
// application's promise that it stays valid and untouched until completion.
unsafe impl Send for HostPtr {}

/// A 3-D byte region for the `*Rect` commands: origins in bytes/rows/slices, pitches in
/// bytes (already defaulted as the spec says).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RectCopy {
    pub src_origin: [usize; 3],
    pub dst_origin: [usize; 3],
    /// Width in bytes, height in rows, depth in slices.
    pub region: [usize; 3],
    pub src_row_pitch: usize,
    pub src_slice_pitch: usize,
    pub dst_row_pitch: usize,
    pub dst_slice_pitch: usize,
}

impl RectCopy {
    /// One past the last byte touched on the source side (None: past `usize::MAX`).
    pub fn src_extent(&self) -> Option<usize> {
        extent(
            self.src_origin,
            self.region,
            self.src_row_pitch,
            self.src_slice_pitch,
        )
    }

    /// One past the last byte touched on the destination side (None: past
    /// `usize::MAX`).
    pub fn dst_extent(&self) -> Option<usize> {
        extent(
            self.dst_origin,
            self.region,
            self.dst_row_pitch,
            self.dst_slice_pitch,
        )
    }

    /// Copies the region from `src` to `dst`.
    ///
    /// # Safety
    /// `src` must be readable for `src_extent()` bytes and `dst` writable for
    /// `dst_extent()` bytes (both `Some`).
    pub unsafe fn run(&self, src: *const u8, dst: *mut u8) {
        let [w, h, d] = self.region;
        for z in 0..d {
            for y in 0..h {
                // No overflow: every offset is below an extent that fits a usize.
                let s = (self.src_origin[2] + z) * self.src_slice_pitch
                    + (self.src_origin[1] + y) * self.src_row_pitch
                    + self.src_origin[0];
                let t = (self.dst_origin[2] + z) * self.dst_slice_pitch
                    + (self.dst_origin[1] + y) * self.dst_row_pitch
                    + self.dst_origin[0];
                // SAFETY: both rows lie inside the extents the caller guarantees.
                unsafe { std::ptr::copy(src.add(s), dst.add(t), w) };
            }
        }
    }
}

/// `(o2 + r2 - 1) * slice + (o1 + r1 - 1) * row + o0 + r0`, checked: an application's
/// origin times a pitch may pass `usize::MAX`, and a wrapped extent would pass the
/// bounds check.
fn extent(
    origin: [usize; 3],
    region: [usize; 3],
    row_pitch: usize,
    slice_pitch: usize,
) -> Option<usize> {
    if region.contains(&0) {
        return Some(0);
    }
    let last = |o: usize, r: usize| o.checked_add(r - 1);
    let z = last(origin[2], region[2])?.checked_mul(slice_pitch)?;
    let y = last(origin[1], region[1])?.checked_mul(row_pitch)?;
    z.checked_add(y)?
        .checked_add(origin[0])?
        .checked_add(region[0])
}

/// The work of one command.
pub enum Command {
    /// Buffer -> host.
    Read {
        mem: Arc<Mem>,
        offset: usize,
        size: usize,
        dst: HostPtr,
    },
    /// Host -> buffer.
    Write {
        mem: Arc<Mem>,
        offset: usize,
        size: usize,
        src: HostPtr,
    },
    /// Buffer -> buffer.
    Copy {
        src: Arc<Mem>,
        src_offset: usize,
        dst: Arc<Mem>,
        dst_offset: usize,
        size: usize,
    },
    /// Repeats `pattern` over `[offset, offset + size)`.
    Fill {
        mem: Arc<Mem>,
        pattern: Vec<u8>,
        offset: usize,
        size: usize,
    },
    /// Buffer -> host, rectangular (`clEnqueueReadBufferRect`; src is the buffer).
    ReadRect {
        mem: Arc<Mem>,
        rect: RectCopy,
        dst: HostPtr,
    },
    /// Host -> buffer, rectangular (dst is the buffer).
    WriteRect {
        mem: Arc<Mem>,
        rect: RectCopy,
        src: HostPtr,
    },
    /// Buffer -> buffer, rectangular.
    CopyRect {
        src: Arc<Mem>,
        dst: Arc<Mem>,
        rect: RectCopy,
    },
    /// Host memory -> host memory (SVM copies; may overlap only if the caller allows).
    HostCopy {
        dst: HostPtr,
        src: HostPtr,
        size: usize,
    },
    /// Repeats `pattern` over `size` bytes of host memory (SVM fills).
    HostFill {
        dst: HostPtr,
        pattern: Vec<u8>,
        size: usize,
    },
    /// A kernel launch; `buffers` keeps every buffer argument alive until it ran;
    /// `tree` runs a kernel that enqueues kernels from the device.
    NdRange {
        launch: exec::Launch,
        buffers: Vec<Arc<Mem>>,
        tree: Option<Arc<dyn LaunchTree>>,
    },
    /// Map/unmap/migrate/marker/barrier: nothing to do beyond ordering (storage is
    /// host memory, maps point straight into it).
    Nothing { keep: Option<Arc<Mem>> },
    /// Host code (tests, internal work).
    Host(Box<dyn FnOnce() -> CLResult<()> + Send>),
}

impl Command {
    /// Does the work.
    fn execute(self) -> CLResult<()> {
        // SAFETY (for every block below): ranges were validated against the buffer sizes
        // at enqueue, host pointers are valid per the OpenCL contract for the command's
        // duration, and the buffers are kept alive by this command. Copies may overlap
        // (USE_HOST_PTR buffers alias host memory), hence `copy`, not `copy_nonoverlapping`.
        match self {
            Command::Read {
                mem,
                offset,
                size,
                dst,
            } => unsafe { std::ptr::copy(mem.ptr().add(offset), dst.0, size) },
            Command::Write {
                mem,
                offset,
                size,
                src,
            } => unsafe { std::ptr::copy(src.0, mem.ptr().add(offset), size) },
            Command::Copy {
                src,
                src_offset,
                dst,
                dst_offset,
                size,
            } => unsafe {
                std::ptr::copy(src.ptr().add(src_offset), dst.ptr().add(dst_offset), size)
            },
            Command::Fill {
                mem,
                pattern,
                offset,
                size,
            } => {
                let p = pattern.len().max(1);
                // SAFETY: see above.
                let target = unsafe { std::slice::from_raw_parts_mut(mem.ptr().add(offset), size) };
                for chunk in target.chunks_mut(p) {
                    chunk.copy_from_slice(&pattern[..chunk.len()]);
                }
            }
            Command::HostCopy { dst, src, size } => unsafe { std::ptr::copy(src.0, dst.0, size) },
            Command::HostFill { dst, pattern, size } => {
                // SAFETY: see above (the caller checked the range lies in one allocation).
                let target = unsafe { std::slice::from_raw_parts_mut(dst.0, size) };
                for chunk in target.chunks_mut(pattern.len().max(1)) {
                    chunk.copy_from_slice(&pattern[..chunk.len()]);
                }
            }
            Command::ReadRect { mem, rect, dst } => unsafe { rect.run(mem.ptr(), dst.0) },
            Command::WriteRect { mem, rect, src } => unsafe { rect.run(src.0, mem.ptr()) },
            Command::CopyRect { src, dst, rect } => unsafe { rect.run(src.ptr(), dst.ptr()) },
            Command::NdRange {
                launch,
                buffers,
                tree,
            } => {
                if let Some(tree) = tree {
                    tree.run(&launch, &run_with_hook);
                } else if launch.kernel.printf().is_empty() {
                    exec::run_ndrange(&launch);
                } else {
                    run_with_printf(&launch);
                }
                drop(buffers);
            }
            Command::Nothing { keep } => drop(keep),
            Command::Host(f) => return f(),
        }
        Ok(())
    }
}

/// Runs a launch of a kernel that calls printf and writes its output to stdout before
/// returning (so before the command's event completes), also when a work-group
/// failed. Calls that did not fit in the buffer returned -1 and print nothing.
fn run_with_printf(launch: &exec::Launch) {
    let output = printf::LaunchOutput::new(PRINTF_BUFFER_SIZE);
    let result = exec::try_run_ndrange_with_printf(launch, output.address());
    printf::write_stdout(&output.text(launch.kernel.printf()));
    if let Err(err) = result {
        panic!("cranecl: {err}");
    }
}

/// Runs one launch of a device-side enqueue tree with the session's hook at
/// `device_enqueue` (printf output written as [`run_with_printf`] does).
fn run_with_hook(launch: &exec::Launch, device_enqueue: u64) {
    let printf = !launch.kernel.printf().is_empty();
    let output = printf.then(|| printf::LaunchOutput::new(PRINTF_BUFFER_SIZE));
    let result = exec::try_run_ndrange_with_hooks(
        launch,
        output.as_ref().map_or(0, |o| o.address()),
        device_enqueue,
    );
    if let Some(output) = output {
        printf::write_stdout(&output.text(launch.kernel.printf()));
    }
    if let Err(err) = result {
        panic!("cranecl: {err}");
    }
}

/// Runs a launch whose kernel enqueues kernels from the device, then the kernels it
/// enqueued (`crate::device_enqueue` implements it; the queue only calls it, so that
/// the queue does not depend on device-side enqueue).
pub trait LaunchTree: Send + Sync {
    /// Runs `launch` and its children, each through `run_one` with the address of the
    /// device-enqueue hook generated code calls.
    fn run(&self, launch: &exec::Launch, run_one: &dyn Fn(&exec::Launch, u64));
}

/// A command waiting for its dependencies.
struct Pending {
    command: Mutex<Option<Command>>,
    event: Arc<Event>,
    /// Dependencies not finished yet, plus one for the enqueuing call itself.
    remaining: AtomicUsize,
    /// A wait-list event failed: the command is not run.
    failed: AtomicBool,
}

/// An earlier command of the same queue finished: its status does not matter (a
/// failed command does not fail the ones after it).
impl Dependent for Pending {
    fn dependency_finished(self: Arc<Self>, _status: cl_int) {
        self.release(false);
    }
}

/// The pool runs a ready command through this.
impl exec::SharedTask for Pending {
    fn run(self: Arc<Self>) {
        Pending::run(&self);
    }
}

impl Pending {
    /// Counts one dependency down; the last one starts the command. Returns whether
    /// this call made it ready (for the enqueuing thread's inline run).
    fn release(self: &Arc<Self>, inline: bool) -> bool {
        if self.remaining.fetch_sub(1, Ordering::AcqRel) != 1 {
            return false;
        }
        self.event.mark_submitted();
        if inline {
            self.run();
        } else {
            if let Some(queue) = self
                .event
                .queue
                .as_ref()
                .and_then(|q| q.as_any().downcast_ref::<Queue>())
            {
                queue.list_ready(self);
            }
            exec::spawn_shared(self.clone());
        }
        true
    }

    /// Whether the calling thread has stack enough to run this command: kernels keep
    /// every lane's private arrays on the stack, and pool workers have large stacks
    /// while an application thread may not.
    fn fits_this_stack(&self) -> bool {
        let need = match &*self.command.lock() {
            Some(Command::NdRange { launch, .. }) => {
                let info = &launch.kernel.info;
                (info.private_bytes_per_item)
                    .saturating_mul(info.sub_group_width as usize)
                    .saturating_mul(2)
                    .saturating_add(info.frame_bytes)
                    .saturating_add(HELP_STACK_MARGIN)
            }
            _ => return true,
        };
        exec::is_pool_worker() || stack_available().is_some_and(|free| free >= need)
    }

    /// Runs the command unless another thread took it already (the pool task and the
    /// helping waiters race for it; exactly one runs it).
    fn run(&self) {
        let command = self.command.lock().take();
        let Some(command) = command else { return };
        if self.failed.load(Ordering::Acquire) {
            drop(command);
            self.event
                .set_status(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
            return;
        }
        self.event.set_status(CL_RUNNING);
        let status =
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| command.execute())) {
                Ok(Ok(())) => CL_COMPLETE,
                Ok(Err(code)) => code.min(-1),
                Err(panic) => {
                    let what = panic
                        .downcast_ref::<String>()
                        .map(String::as_str)
                        .or_else(|| panic.downcast_ref::<&str>().copied())
                        .unwrap_or("unknown cause");
                    self.event.context.report_error(&format!(
                        "cranecl: command {:#x} failed: {what}",
                        self.event.command_type
                    ));
                    CL_OUT_OF_RESOURCES
                }
            };
        self.event.set_status(status);
    }
}

/// Stack a helping thread keeps free beyond a kernel's private arrays (spills, the
/// runtime's own frames).
const HELP_STACK_MARGIN: usize = 512 << 10;

/// Bytes of stack left below the caller's frame, if the thread's stack is known.
fn stack_available() -> Option<usize> {
    thread_local! {
        static STACK_LOW: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    }
    let low = match STACK_LOW.with(|c| c.get()) {
        Some(low) => low,
        None => {
            let low = stack_low_end()?;
            STACK_LOW.with(|c| c.set(Some(low)));
            low
        }
    };
    let here = 0u8;
    (std::ptr::addr_of!(here) as usize).checked_sub(low)
}

/// The lowest address of the calling thread's stack.
fn stack_low_end() -> Option<usize> {
    // SAFETY: `attr` is initialised by pthread_getattr_np before it is read and
    // destroyed afterwards; the out-pointers point at live locals.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size = 0usize;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        (ok && !addr.is_null()).then_some(addr as usize)
    }
}

/// An in-order command queue.
#[repr(C)]
pub struct Queue {
    header: ApiHeader,
    /// The context (an implicit reference).
    pub context: Arc<Context>,
    /// The device.
    pub device: Arc<Device>,
    /// `CL_QUEUE_PROPERTIES`.
    pub properties: cl_command_queue_properties,
    /// `CL_QUEUE_PROPERTIES_ARRAY` (empty for clCreateCommandQueue).
    pub properties_array: Vec<cl_queue_properties>,
    /// `CL_QUEUE_SIZE` of an on-device queue (0 for host queues).
    pub queue_size: u32,
    order: Mutex<QueueOrder>,
    /// Commands handed to the pool, oldest first, that waiters may run themselves
    /// (entries whose command already ran are skipped and pruned).
    ready: Mutex<VecDeque<Weak<Pending>>>,
    /// `ready.len()`, readable without the lock (waiters poll it while spinning).
    ready_len: AtomicUsize,
}

/// What later commands must wait for. Weak references: an event holds its queue, and a
/// command that nobody references any more has finished.
#[derive(Default)]
struct QueueOrder {
    /// In-order queues: the most recently enqueued command.
    last: Weak<Event>,
    /// Out-of-order queues: commands that may still be running (for markers, barriers
    /// and clFinish), pruned as they finish.
    outstanding: Vec<Weak<Event>>,
    /// Out-of-order queues: the latest barrier, which every later command waits for.
    barrier: Weak<Event>,
}

impl CommandQueue for Queue {
    fn help_until(&self, event: &Event) {
        Queue::help_until(self, event)
    }
    fn flush(&self) {
        Queue::flush(self)
    }
    fn profiling(&self) -> bool {
        Queue::profiling(self)
    }
    fn context(&self) -> &Arc<Context> {
        &self.context
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn into_any(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync> {
        self
    }
}

impl ApiObject for Queue {
    const KIND: ObjectKind = ObjectKind::Queue;
    fn header(&self) -> &ApiHeader {
        &self.header
    }
}

impl Queue {
    /// The queue of a command event (`None` for user events).
    pub fn of_event(event: &Event) -> Option<Arc<Queue>> {
        event.queue.clone()?.into_any().downcast::<Queue>().ok()
    }

    /// A new queue (properties validated by the caller).
    pub fn new(
        context: Arc<Context>,
        device: Arc<Device>,
        properties: cl_command_queue_properties,
        properties_array: Vec<cl_queue_properties>,
    ) -> Arc<Queue> {
        Arc::new(Queue {
            header: ApiHeader::new(ObjectKind::Queue),
            context,
            device,
            properties,
            properties_array,
            queue_size: 0,
            order: Mutex::new(QueueOrder::default()),
            ready: Mutex::new(VecDeque::new()),
            ready_len: AtomicUsize::new(0),
        })
    }

    /// A new queue of `size` bytes (`CL_QUEUE_SIZE`, on-device queues; properties
    /// validated by the caller). `crate::device_enqueue::new_queue` registers
    /// on-device queues with the device.
    pub fn new_sized(
        context: Arc<Context>,
        device: Arc<Device>,
        properties: cl_command_queue_properties,
        properties_array: Vec<cl_queue_properties>,
        size: u32,
    ) -> Arc<Queue> {
        let mut q = Queue::new(context, device, properties, properties_array);
        if let Some(q) = Arc::get_mut(&mut q) {
            q.queue_size = size;
        }
        q
    }

    /// Whether this is an on-device queue (`CL_QUEUE_ON_DEVICE`).
    pub fn on_device(&self) -> bool {
        self.properties & CL_QUEUE_ON_DEVICE != 0
    }

    /// Whether commands may run out of order (`CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE`).
    pub fn out_of_order(&self) -> bool {
        self.properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE != 0
    }

    /// Records `event` as enqueued and returns the queue-order dependencies it gets:
    /// the previous command (in-order), or the latest barrier / every outstanding
    /// command for barriers and markers without a wait list (out-of-order).
    fn order_after(
        &self,
        event: &Arc<Event>,
        command_type: cl_command_type,
        has_wait_list: bool,
    ) -> (Option<Arc<Event>>, Vec<Arc<Event>>) {
        let mut order = self.order.lock();
        if !self.out_of_order() {
            let last = std::mem::replace(&mut order.last, Arc::downgrade(event)).upgrade();
            return (last, Vec::new());
        }
        if order.outstanding.len() >= 64 {
            order
                .outstanding
                .retain(|w| w.upgrade().is_some_and(|e| !e.is_finished()));
        }
        let synchronizing = matches!(command_type, CL_COMMAND_BARRIER | CL_COMMAND_MARKER);
        let deps: Vec<Arc<Event>> = if synchronizing && !has_wait_list {
            order.outstanding.iter().filter_map(Weak::upgrade).collect()
        } else {
            order.barrier.upgrade().into_iter().collect()
        };
        if command_type == CL_COMMAND_BARRIER {
            order.barrier = Arc::downgrade(event);
        }
        order.outstanding.push(Arc::downgrade(event));
        (None, deps)
    }

    /// Whether events record profiling timestamps.
    pub fn profiling(&self) -> bool {
        self.properties & CL_QUEUE_PROFILING_ENABLE != 0
    }

    /// Enqueues `command` after the previous command and after `wait_list`; returns its
    /// event. With `blocking`, waits for completion and returns the command's error.
    pub fn enqueue(
        self: &Arc<Self>,
        command_type: cl_command_type,
        command: Command,
        wait_list: &[Arc<Event>],
        blocking: bool,
    ) -> CLResult<Arc<Event>> {
        let event = Event::new_command(self.clone(), command_type);
        let (last, previous) = self.order_after(&event, command_type, !wait_list.is_empty());
        let pending = Arc::new(Pending {
            command: Mutex::new(Some(command)),
            event: event.clone(),
            remaining: AtomicUsize::new(
                wait_list.len() + 1 + usize::from(last.is_some()) + previous.len(),
            ),
            failed: AtomicBool::new(false),
        });
        for dep in wait_list {
            let p = pending.clone();
            dep.on_finished(Box::new(move |status| {
                if status < 0 {
                    p.failed.store(true, Ordering::Release);
                }
                p.release(false);
            }));
        }
        for prev in last.into_iter().chain(previous) {
            prev.notify_when_finished(pending.clone());
        }
        pending.release(blocking);
        drop(pending);
        if blocking {
            let status = event.wait();
            if status < 0 {
                return Err(if status == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST {
                    status
                } else {
                    CL_OUT_OF_RESOURCES
                });
            }
        }
        Ok(event)
    }

    /// Lists a command that was just handed to the pool as runnable by waiters.
    fn list_ready(&self, pending: &Arc<Pending>) {
        let mut ready = self.ready.lock();
        // Drop entries whose pool task already ran (workers take them in order, so
        // they gather at the front); the list stays short without any waiter.
        while ready.front().is_some_and(|w| w.strong_count() == 0) {
            ready.pop_front();
        }
        ready.push_back(Arc::downgrade(pending));
        self.ready_len.store(ready.len(), Ordering::Release);
    }

    /// The oldest listed command that may not have started yet.
    fn take_ready(&self) -> Option<Arc<Pending>> {
        if self.ready_len.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut ready = self.ready.lock();
        let found = loop {
            match ready.pop_front() {
                None => break None,
                Some(weak) => {
                    if let Some(pending) = weak.upgrade() {
                        break Some(pending);
                    }
                }
            }
        };
        self.ready_len.store(ready.len(), Ordering::Release);
        found
    }

    /// Runs this queue's ready commands on the calling thread until `event` is
    /// finished or nothing is ready; then spins for at most [`WAIT_SPIN`] (helping
    /// again if a command becomes ready meanwhile). Returns without sleeping; the
    /// caller sleeps if the event is still unfinished.
    pub fn help_until(&self, event: &Event) {
        let mut deadline: Option<Instant> = None;
        loop {
            if event.is_finished() {
                return;
            }
            if let Some(pending) = self.take_ready() {
                // A kernel too big for this thread's stack stays with the pool.
                if pending.fits_this_stack() {
                    pending.run();
                }
                deadline = None;
                continue;
            }
            let now = Instant::now();
            let until = *deadline.get_or_insert(now + WAIT_SPIN);
            if now >= until {
                return;
            }
            for _ in 0..32 {
                if event.is_finished() || self.ready_len.load(Ordering::Relaxed) > 0 {
                    break;
                }
                std::hint::spin_loop();
            }
        }
    }

    /// `clFlush`: commands are handed to the pool as soon as they are ready, so there
    /// is nothing to push.
    pub fn flush(&self) {}

    /// `clFinish`: waits for every command enqueued so far.
    pub fn finish(&self) {
        let pending: Vec<Arc<Event>> = {
            let order = self.order.lock();
            order
                .last
                .upgrade()
                .into_iter()
                .chain(order.outstanding.iter().filter_map(Weak::upgrade))
                .collect()
        };
        for event in pending {
            event.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Timestamp;
    use crate::platform::Platform;

    fn queue() -> Arc<Queue> {
        let device = Platform::get().device().clone();
        let ctx = Context::new(vec![device.clone()], Vec::new(), None);
        Queue::new(ctx, device, CL_QUEUE_PROFILING_ENABLE, Vec::new())
    }

    #[test]
    fn stack_room_is_measured_per_thread() {
        let small = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(stack_available)
            .expect("thread")
            .join()
            .expect("join")
            .expect("stack known");
        assert!(small > 0 && small < 256 << 10, "{small}");
        let big = std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(stack_available)
            .expect("thread")
            .join()
            .expect("join")
            .expect("stack known");
        assert!(big > HELP_STACK_MARGIN && big < 8 << 20, "{big}");
    }

    #[test]
    fn rect_extent() {
        let r = RectCopy {
            src_origin: [1, 2, 0],
            dst_origin: [0, 0, 0],
            region: [3, 2, 1],
            src_row_pitch: 10,
            src_slice_pitch: 100,
            dst_row_pitch: 3,
            dst_slice_pitch: 6,
        };
        assert_eq!(r.src_extent(), Some(3 * 10 + 1 + 3));
        assert_eq!(r.dst_extent(), Some(6));
        let src: Vec<u8> = (0..100).collect();
        let mut dst = [0u8; 6];
        // SAFETY: extents checked above.
        unsafe { r.run(src.as_ptr(), dst.as_mut_ptr()) };
        assert_eq!(dst, [21, 22, 23, 31, 32, 33]);
    }

    #[test]
    fn in_order_with_user_event() {
        let q = queue();
        let log = Arc::new(Mutex::new(Vec::new()));
        let user = Event::new_user(q.context.clone());
        let mut events = Vec::new();
        for i in 0..20 {
            let l = log.clone();
            let wait: Vec<Arc<Event>> = if i == 0 {
                vec![user.clone()]
            } else {
                Vec::new()
            };
            let cmd = Command::Host(Box::new(move || {
                l.lock().push(i);
                Ok(())
            }));
            events.push(
                q.enqueue(CL_COMMAND_MARKER, cmd, &wait, false)
                    .expect("enqueue"),
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(
            log.lock().is_empty(),
            "nothing may run before the user event completes"
        );
        assert_eq!(events[0].status(), CL_QUEUED);
        user.set_status(CL_COMPLETE);
        q.finish();
        assert_eq!(*log.lock(), (0..20).collect::<Vec<_>>());
        let e = &events[19];
        assert_eq!(e.status(), CL_COMPLETE);
        let t: Vec<u64> = [
            Timestamp::Queued,
            Timestamp::Submitted,
            Timestamp::Started,
            Timestamp::Ended,
        ]
        .iter()
        .map(|w| e.time(*w))
        .collect();
        assert!(t.windows(2).all(|w| w[0] <= w[1]), "{t:?}");
    }

    #[test]
    fn out_of_order_barrier_and_marker() {
        let device = Platform::get().device().clone();
        let ctx = Context::new(vec![device.clone()], Vec::new(), None);
        let q = Queue::new(
            ctx.clone(),
            device,
            CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
            Vec::new(),
        );
        let gate = Event::new_user(ctx);
        let log = Arc::new(Mutex::new(Vec::new()));
        let host = |i: u32| {
            let l = log.clone();
            Command::Host(Box::new(move || {
                l.lock().push(i);
                Ok(())
            }))
        };
        // Held back by a user event; an independent command overtakes it.
        let a = q
            .enqueue(
                CL_COMMAND_MARKER + 100,
                host(1),
                std::slice::from_ref(&gate),
                false,
            )
            .expect("a");
        let b = q
            .enqueue(CL_COMMAND_MARKER + 100, host(2), &[], false)
            .expect("b");
        assert_eq!(b.wait(), CL_COMPLETE);
        assert_eq!(a.status(), CL_QUEUED);
        // A marker without a wait list waits for both; a barrier holds later commands.
        let marker = q
            .enqueue(
                CL_COMMAND_MARKER,
                Command::Nothing { keep: None },
                &[],
                false,
            )
            .expect("marker");
        let barrier = q
            .enqueue(
                CL_COMMAND_BARRIER,
                Command::Nothing { keep: None },
                &[],
                false,
            )
            .expect("barrier");
        let c = q
            .enqueue(CL_COMMAND_MARKER + 100, host(3), &[], false)
            .expect("c");
        std::thread::sleep(std::time::Duration::from_millis(10));
        assert_eq!(marker.status(), CL_QUEUED);
        assert_eq!(c.status(), CL_QUEUED);
        gate.set_status(CL_COMPLETE);
        q.finish();
        assert_eq!(*log.lock(), vec![2, 1, 3]);
        assert!([marker, barrier, c]
            .iter()
            .all(|e| e.status() == CL_COMPLETE));
    }

    #[test]
    fn concurrent_enqueues_keep_queue_order() {
        let q = queue();
        let log = Arc::new(Mutex::new(Vec::new()));
        let threads: Vec<_> = (0..4u32)
            .map(|t| {
                let (q, log) = (q.clone(), log.clone());
                std::thread::spawn(move || {
                    for i in 0..300u32 {
                        let l = log.clone();
                        let cmd = Command::Host(Box::new(move || {
                            l.lock().push((t, i));
                            Ok(())
                        }));
                        let blocking = i % 50 == 0;
                        q.enqueue(CL_COMMAND_MARKER, cmd, &[], blocking)
                            .expect("enqueue");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        q.finish();
        let log = log.lock();
        assert_eq!(log.len(), 1200);
        for t in 0..4 {
            let mine: Vec<u32> = log
                .iter()
                .filter(|(x, _)| *x == t)
                .map(|(_, i)| *i)
                .collect();
            assert_eq!(mine, (0..300).collect::<Vec<_>>(), "thread {t} in order");
        }
    }

    #[test]
    fn a_panicking_command_fails_its_event_and_notifies_the_context() {
        use std::sync::atomic::AtomicUsize;
        static NOTIFIED: AtomicUsize = AtomicUsize::new(0);
        unsafe extern "C" fn notify(
            errinfo: *const std::ffi::c_char,
            _: *const std::ffi::c_void,
            _: usize,
            _: *mut std::ffi::c_void,
        ) {
            // SAFETY: the runtime passes a NUL-terminated message.
            let text = unsafe { std::ffi::CStr::from_ptr(errinfo) }.to_string_lossy();
            if text.contains("boom") {
                NOTIFIED.fetch_add(1, Ordering::AcqRel);
            }
        }
        let device = Platform::get().device().clone();
        let cb = crate::callback::Callback {
            func: notify as crate::callback::ContextNotifyFn,
            user_data: std::ptr::null_mut(),
        };
        let ctx = Context::new(vec![device.clone()], Vec::new(), Some(cb));
        let q = Queue::new(ctx, device, 0, Vec::new());
        let cmd = Command::Host(Box::new(|| panic!("boom")));
        let e = q
            .enqueue(CL_COMMAND_MARKER, cmd, &[], false)
            .expect("enqueue");
        assert_eq!(e.wait(), CL_OUT_OF_RESOURCES);
        assert_eq!(NOTIFIED.load(Ordering::Acquire), 1);
        // The queue keeps working.
        let ok = q.enqueue(
            CL_COMMAND_MARKER,
            Command::Nothing { keep: None },
            &[],
            true,
        );
        assert!(ok.is_ok());
    }

    #[test]
    fn failed_wait_list_propagates() {
        let q = queue();
        let user = Event::new_user(q.context.clone());
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        let cmd = Command::Host(Box::new(move || {
            r.store(true, Ordering::Release);
            Ok(())
        }));
        let e = q
            .enqueue(CL_COMMAND_MARKER, cmd, std::slice::from_ref(&user), false)
            .expect("enqueue");
        user.set_status(-5);
        assert_eq!(e.wait(), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        assert!(!ran.load(Ordering::Acquire));
    }

    #[test]
    fn blocking_transfer_round_trip() {
        let q = queue();
        // SAFETY: no host pointer is involved.
        let mem = unsafe {
            Mem::new_buffer(
                q.context.clone(),
                CL_MEM_READ_WRITE,
                64,
                std::ptr::null_mut(),
                Vec::new(),
            )
        }
        .expect("buffer");
        let mut src: Vec<u8> = (0..64).collect();
        q.enqueue(
            CL_COMMAND_WRITE_BUFFER,
            Command::Write {
                mem: mem.clone(),
                offset: 0,
                size: 64,
                src: HostPtr(src.as_mut_ptr()),
            },
            &[],
            true,
        )
        .expect("write");
        q.enqueue(
            CL_COMMAND_FILL_BUFFER,
            Command::Fill {
                mem: mem.clone(),
                pattern: vec![0xaa, 0xbb],
                offset: 8,
                size: 8,
            },
            &[],
            false,
        )
        .expect("fill");
        let mut dst = vec![0u8; 64];
        q.enqueue(
            CL_COMMAND_READ_BUFFER,
            Command::Read {
                mem,
                offset: 0,
                size: 64,
                dst: HostPtr(dst.as_mut_ptr()),
            },
            &[],
            true,
        )
        .expect("read");
        let mut want = src.clone();
        for (i, b) in want[8..16].iter_mut().enumerate() {
            *b = if i % 2 == 0 { 0xaa } else { 0xbb };
        }
        assert_eq!(dst, want);
    }
}
