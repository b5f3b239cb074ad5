//! Device-side enqueue (OpenCL 2.0 `enqueue_kernel`): on-device queues, the default
//! device queue, and the runtime's [`DeviceEnqueue`] hook that generated code calls.
//!
//! Scheme: a host launch of a kernel that uses device-side enqueue runs with a
//! [`Session`]. `enqueue_kernel` validates its arguments, copies the block literal and
//! records the child launch (in the session, whichever device queue it names). When
//! the parent ND-range has completed, the recorded children run one after the other,
//! each once every event of its wait list is complete, and the children they enqueue
//! are recorded and run the same way, until none are left; only then does the host
//! command complete. Running children after their parent's whole ND-range meets all
//! three flags (`NO_WAIT`, `WAIT_KERNEL`, `WAIT_WORK_GROUP`). Device events
//! (`clk_event_t`) are slots of the session: a handle is the slot's index plus one;
//! a released slot is never reused, so `is_valid_event` sees it as invalid.
//!
//! A `queue_t` value is the address of an on-device [`Queue`]; the registry here
//! knows which addresses are live device queues.

use std::ffi::{c_void, CStr};
use std::sync::{Arc, Weak};

use cranecl_jit::device_enqueue::DeviceOp;
use cranecl_jit::{CompiledProgram, DeviceEnqueue};

use crate::exec::{self, Launch, LocalArg, NdRange};
use crate::platform::{now_ns, Device, MAX_WORK_GROUP_SIZE, MAX_WORK_ITEM_SIZES};
use crate::queue::Queue;
use crate::sync::Mutex;

/// `CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE`.
pub const PREFERRED_QUEUE_SIZE: u32 = 128 * 1024;
/// `CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE`.
pub const MAX_QUEUE_SIZE: u32 = 8 * 1024 * 1024;
/// `CL_DEVICE_MAX_ON_DEVICE_QUEUES`.
pub const MAX_ON_DEVICE_QUEUES: u32 = 4;
/// `CL_DEVICE_MAX_ON_DEVICE_EVENTS`: live device events per host launch.
pub const MAX_ON_DEVICE_EVENTS: u32 = 1024;
/// Bytes of queue space one enqueued child takes (a launch record): a session holds
/// at most `queue size / this` children that have not run yet.
const CHILD_RECORD_BYTES: u32 = 128;

// OpenCL C return codes of enqueue_kernel.
const CLK_SUCCESS: i32 = 0;
const CLK_INVALID_ARG_SIZE: i32 = -51;
const CLK_INVALID_EVENT_WAIT_LIST: i32 = -57;
const CLK_INVALID_VALUE: i32 = -30;
const CLK_EVENT_ALLOCATION_FAILURE: i32 = -100;
const CLK_ENQUEUE_FAILURE: i32 = -101;
const CLK_INVALID_QUEUE: i32 = -102;
const CLK_INVALID_NDRANGE: i32 = -160;
const CLK_DEVICE_QUEUE_FULL: i32 = -161;
/// `CL_COMPLETE` / `CL_SUBMITTED`.
const COMPLETE: i32 = 0;
const SUBMITTED: i32 = 2;
/// `CLK_PROFILING_COMMAND_EXEC_TIME`.
const PROFILING_EXEC_TIME: u64 = 0x1;

/// Live on-device queues, and which of them is the default of its (context, device).
struct Registry {
    queues: Vec<Weak<Queue>>,
    defaults: Vec<Weak<Queue>>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    queues: Vec::new(),
    defaults: Vec::new(),
});

/// A new on-device queue of `size` bytes (properties validated by the caller),
/// recorded here; one created with `CL_QUEUE_ON_DEVICE_DEFAULT` becomes its
/// device's default.
pub fn new_queue(
    context: Arc<crate::context::Context>,
    device: Arc<Device>,
    properties: opencl_sys::cl_command_queue_properties,
    properties_array: Vec<opencl_sys::cl_queue_properties>,
    size: u32,
) -> Arc<Queue> {
    let q = Queue::new_sized(context, device, properties, properties_array, size);
    register_queue(&q, properties & opencl_sys::CL_QUEUE_ON_DEVICE_DEFAULT != 0);
    q
}

/// Records a new on-device queue; one created with `CL_QUEUE_ON_DEVICE_DEFAULT`
/// becomes its device's default.
fn register_queue(queue: &Arc<Queue>, default: bool) {
    let mut r = REGISTRY.lock();
    r.queues.retain(|w| w.strong_count() > 0);
    r.queues.push(Arc::downgrade(queue));
    if default {
        drop(r);
        set_default(queue);
    }
}

/// `clSetDefaultDeviceCommandQueue`: `queue` becomes the default device queue of its
/// context and device.
pub fn set_default(queue: &Arc<Queue>) {
    let mut r = REGISTRY.lock();
    r.defaults.retain(|w| {
        w.upgrade().is_some_and(|q| {
            !(Arc::ptr_eq(&q.context, &queue.context) && Arc::ptr_eq(&q.device, &queue.device))
        })
    });
    r.defaults.push(Arc::downgrade(queue));
}

/// The default device queue of `queue`'s context and device (`CL_QUEUE_DEVICE_DEFAULT`).
pub fn default_of(
    context: &Arc<crate::context::Context>,
    device: &Arc<Device>,
) -> Option<Arc<Queue>> {
    let r = REGISTRY.lock();
    r.defaults
        .iter()
        .filter_map(Weak::upgrade)
        .find(|q| Arc::ptr_eq(&q.context, context) && Arc::ptr_eq(&q.device, device))
}

/// The live on-device queue whose address is `value` (a `queue_t`).
fn device_queue_at(value: u64) -> Option<Arc<Queue>> {
    if value == 0 {
        return None;
    }
    let r = REGISTRY.lock();
    r.queues
        .iter()
        .filter_map(Weak::upgrade)
        .find(|q| Arc::as_ptr(q) as u64 == value)
}

/// The `queue_t` value of an on-device queue.
pub fn queue_value(queue: &Arc<Queue>) -> u64 {
    Arc::as_ptr(queue) as u64
}

/// What a launch that may enqueue needs to find its children.
#[derive(Clone)]
pub struct Origin {
    /// The parent's program code on its device (children are kernels of it).
    pub program: Arc<CompiledProgram>,
    pub device: Arc<Device>,
    pub context: Arc<crate::context::Context>,
}

impl crate::queue::LaunchTree for Origin {
    fn run(&self, launch: &Launch, run_one: &dyn Fn(&Launch, u64)) {
        run_tree(launch, self, run_one);
    }
}

/// One device event.
struct Slot {
    /// References: the kernel's (create/retain/release, the `event_ret`) plus one
    /// held by the command it belongs to until that command ends.
    refs: u32,
    status: i32,
    user: bool,
    start: u64,
    end: u64,
    /// `capture_event_profiling_info` destinations, written when the command ends.
    captures: Vec<u64>,
}

/// A recorded child launch (none for a marker).
struct Child {
    launch: Option<Launch>,
    /// The block literal's copy the launch's first argument points at.
    _block: Box<[u64]>,
    wait: Vec<u64>,
    event: Option<u64>,
}

#[derive(Default)]
struct State {
    pending: Vec<Child>,
    events: Vec<Slot>,
    live_events: u32,
}

/// The device-side work of one host launch.
struct Session {
    origin: Origin,
    capacity: usize,
    state: Mutex<State>,
}

/// Runs `launch` (whose kernel uses device-side enqueue) and every child it enqueues,
/// transitively; `run_one` runs a single launch given the hook address.
pub fn run_tree(launch: &Launch, origin: &Origin, run_one: &dyn Fn(&Launch, u64)) {
    let size = default_of(&origin.context, &origin.device)
        .map_or(PREFERRED_QUEUE_SIZE, |q| q.queue_size.max(1));
    let session = Session {
        origin: origin.clone(),
        capacity: (size / CHILD_RECORD_BYTES).max(16) as usize,
        state: Mutex::new(State::default()),
    };
    let hook = DeviceEnqueue {
        data: &session as *const Session as *const c_void,
        call: hook_call,
    };
    let hook_addr = &hook as *const DeviceEnqueue as u64;
    run_one(launch, hook_addr);
    loop {
        let next = {
            let mut st = session.state.lock();
            if st.pending.is_empty() {
                break;
            }
            let ready = st.pending.iter().position(|c| {
                c.wait
                    .iter()
                    .all(|&e| slot_status(&st, e).is_none_or(|s| s <= COMPLETE))
            });
            match ready {
                Some(i) => {
                    let child = st.pending.remove(i);
                    let failed = child
                        .wait
                        .iter()
                        .any(|&e| slot_status(&st, e).is_some_and(|s| s < COMPLETE));
                    Some((child, failed))
                }
                None => {
                    // Every remaining child waits for a user event nobody completes.
                    let stuck = std::mem::take(&mut st.pending);
                    for c in stuck {
                        if let Some(e) = c.event {
                            finish_event(&mut st, e, CLK_ENQUEUE_FAILURE, 0, 0);
                        }
                    }
                    break;
                }
            }
        };
        let Some((child, failed)) = next else {
            break;
        };
        if failed {
            let mut st = session.state.lock();
            if let Some(e) = child.event {
                finish_event(&mut st, e, CLK_ENQUEUE_FAILURE, 0, 0);
            }
            continue;
        }
        let start = now_ns();
        if let Some(launch) = &child.launch {
            run_one(launch, hook_addr);
        }
        let end = now_ns();
        let mut st = session.state.lock();
        if let Some(e) = child.event {
            finish_event(&mut st, e, COMPLETE, start, end);
        }
    }
}

fn slot_index(handle: u64) -> Option<usize> {
    handle.checked_sub(1).map(|i| i as usize)
}

fn slot_status(st: &State, handle: u64) -> Option<i32> {
    st.events.get(slot_index(handle)?).map(|s| s.status)
}

/// Ends the command of event `handle`: status, times, profiling captures, and the
/// command's reference.
fn finish_event(st: &mut State, handle: u64, status: i32, start: u64, end: u64) {
    let Some(slot) = slot_index(handle).and_then(|i| st.events.get_mut(i)) else {
        return;
    };
    slot.status = status;
    slot.start = start;
    slot.end = end;
    for dst in std::mem::take(&mut slot.captures) {
        write_profiling(dst, start, end);
    }
    release(st, handle);
}

fn write_profiling(dst: u64, start: u64, end: u64) {
    let exec = end.saturating_sub(start);
    // SAFETY: the kernel passed a `global ulong*` to two values
    // (capture_event_profiling_info's contract); the buffer outlives the host command.
    unsafe {
        let p = dst as *mut u64;
        p.write_unaligned(exec);
        p.add(1).write_unaligned(exec);
    }
}

fn release(st: &mut State, handle: u64) -> bool {
    let Some(slot) = slot_index(handle).and_then(|i| st.events.get_mut(i)) else {
        return false;
    };
    if slot.refs == 0 {
        return false;
    }
    slot.refs -= 1;
    if slot.refs == 0 {
        st.live_events -= 1;
    }
    true
}

fn new_event(st: &mut State, refs: u32, user: bool) -> Option<u64> {
    if st.live_events >= MAX_ON_DEVICE_EVENTS {
        return None;
    }
    st.live_events += 1;
    st.events.push(Slot {
        refs,
        status: if user { SUBMITTED } else { 1 },
        user,
        start: 0,
        end: 0,
        captures: Vec::new(),
    });
    Some(st.events.len() as u64)
}

fn is_live(st: &State, handle: u64) -> bool {
    slot_index(handle)
        .and_then(|i| st.events.get(i))
        .is_some_and(|s| s.refs > 0)
}

/// The hook generated code calls (see [`cranecl_jit::device_enqueue::DeviceOp`]).
unsafe extern "C" fn hook_call(data: *const c_void, op: u32, args: *const u64, nargs: u32) -> u64 {
    // SAFETY: `data` is the Session of run_tree, alive while its launches run;
    // `args` holds `nargs` values.
    let (session, args) = unsafe {
        (
            &*(data as *const Session),
            std::slice::from_raw_parts(args, nargs as usize),
        )
    };
    let arg = |i: usize| args.get(i).copied().unwrap_or(0);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| session.call(op, &arg)));
    result.unwrap_or(CLK_ENQUEUE_FAILURE as i64 as u64)
}

impl Session {
    fn call(&self, op: u32, arg: &dyn Fn(usize) -> u64) -> u64 {
        let i32_result = |r: i32| r as i64 as u64;
        match op {
            x if x == DeviceOp::GetDefaultQueue as u32 => {
                default_of(&self.origin.context, &self.origin.device).map_or(0, |q| queue_value(&q))
            }
            x if x == DeviceOp::EnqueueKernel as u32 => i32_result(self.enqueue(arg)),
            x if x == DeviceOp::EnqueueMarker as u32 => i32_result(self.marker(arg)),
            x if x == DeviceOp::KernelWorkGroupSize as u32 => self
                .kernel_named(arg(1))
                .map_or(0, |k| max_wg_size(&k.info) as u64),
            x if x == DeviceOp::KernelPreferredMultiple as u32 => self
                .kernel_named(arg(1))
                .map_or(0, |k| k.info.sub_group_width as u64),
            x if x == DeviceOp::KernelMaxSubGroupSize as u32
                || x == DeviceOp::KernelSubGroupCount as u32 =>
            {
                let Some(k) = self.kernel_named(arg(1)) else {
                    return 0;
                };
                let Ok(nd) = self.ndrange_for(&k, arg(0)) else {
                    return 0;
                };
                if x == DeviceOp::KernelMaxSubGroupSize as u32 {
                    // What `get_max_sub_group_size()` returns in the block and the API's
                    // CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE: the compiled width,
                    // whatever the local size (as Intel's CPU runtime).
                    k.info.sub_group_width as u64
                } else {
                    k.info.num_sub_groups(nd.local_size) as u64
                }
            }
            x if x == DeviceOp::KernelLocalSizeForSubGroupCount as u32 => {
                // As clGetKernelSubGroupInfo(CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT).
                let Some(k) = self.kernel_named(arg(1)) else {
                    return 0;
                };
                let count = arg(0) as u32 as usize;
                let w = k.info.sub_group_width as usize;
                let allowed = k
                    .info
                    .required_num_sub_groups
                    .is_none_or(|n| n as usize == count);
                count
                    .checked_mul(w)
                    .filter(|x| *x <= max_wg_size(&k.info) && count > 0 && allowed)
                    .unwrap_or(0) as u64
            }
            x if x == DeviceOp::KernelMaxNumSubGroups as u32 => {
                self.kernel_named(arg(1)).map_or(0, |k| {
                    max_wg_size(&k.info).div_ceil(k.info.sub_group_width as usize) as u64
                })
            }
            x if x == DeviceOp::CreateUserEvent as u32 => {
                let mut st = self.state.lock();
                new_event(&mut st, 1, true).unwrap_or(0)
            }
            x if x == DeviceOp::IsValidEvent as u32 => is_live(&self.state.lock(), arg(0)) as u64,
            x if x == DeviceOp::RetainEvent as u32 => {
                let mut st = self.state.lock();
                if is_live(&st, arg(0)) {
                    if let Some(s) = slot_index(arg(0)).and_then(|i| st.events.get_mut(i)) {
                        s.refs += 1;
                    }
                }
                0
            }
            x if x == DeviceOp::ReleaseEvent as u32 => {
                release(&mut self.state.lock(), arg(0));
                0
            }
            x if x == DeviceOp::SetUserEventStatus as u32 => {
                let mut st = self.state.lock();
                let status = arg(1) as i64 as i32;
                if let Some(s) = slot_index(arg(0)).and_then(|i| st.events.get_mut(i)) {
                    if s.user && s.refs > 0 && s.status > COMPLETE && status <= COMPLETE {
                        s.status = status;
                        let t = now_ns();
                        s.start = t;
                        s.end = t;
                    }
                }
                0
            }
            x if x == DeviceOp::CaptureProfilingInfo as u32 => {
                let (handle, name, dst) = (arg(0), arg(1), arg(2));
                if name != PROFILING_EXEC_TIME || dst == 0 {
                    return 0;
                }
                let mut st = self.state.lock();
                if let Some(s) = slot_index(handle).and_then(|i| st.events.get_mut(i)) {
                    if s.status <= COMPLETE {
                        write_profiling(dst, s.start, s.end);
                    } else {
                        s.captures.push(dst);
                    }
                }
                0
            }
            _ => 0,
        }
    }

    /// The invoke kernel whose NUL-terminated name is at `name`.
    fn kernel_named(&self, name: u64) -> Option<Arc<cranecl_jit::CompiledKernel>> {
        if name == 0 {
            return None;
        }
        // SAFETY: the rewrite passes the address of a NUL-terminated `__constant`
        // string of the program (see build::device_enqueue).
        let name = unsafe { CStr::from_ptr(name as *const std::ffi::c_char) };
        self.origin.program.kernel(name.to_str().ok()?).cloned()
    }

    /// The ND-range of an `ndrange_t` at `addr` for kernel `k`, its local size chosen
    /// when it has none.
    fn ndrange_for(&self, k: &cranecl_jit::CompiledKernel, addr: u64) -> Result<NdRange, i32> {
        if addr == 0 {
            return Err(CLK_INVALID_NDRANGE);
        }
        // SAFETY: clang passes the address of an `ndrange_t` (u32, then three arrays of
        // three size_t at offsets 8, 32, 56).
        let read = |off: usize| unsafe { ((addr as usize + off) as *const u64).read_unaligned() };
        // SAFETY: as above.
        let dims = unsafe { (addr as *const u32).read_unaligned() };
        if !(1..=3).contains(&dims) {
            return Err(CLK_INVALID_NDRANGE);
        }
        let d = dims as usize;
        let mut offset = [0usize; 3];
        let mut global = [1usize; 3];
        let mut local = [1usize; 3];
        for i in 0..d {
            offset[i] = read(8 + 8 * i) as usize;
            global[i] = read(32 + 8 * i) as usize;
            local[i] = read(56 + 8 * i) as usize;
            if global[i] == 0 || global[i].checked_add(offset[i]).is_none() {
                return Err(CLK_INVALID_NDRANGE);
            }
        }
        let max = max_wg_size(&k.info);
        if local[..d].iter().all(|&l| l == 0) {
            local = exec::choose_local_size_non_uniform(&k.info, dims, global, max, true);
        } else if local[..d]
            .iter()
            .zip(MAX_WORK_ITEM_SIZES)
            .any(|(&l, m)| l == 0 || l > m)
            || local.iter().product::<usize>() > max
        {
            return Err(CLK_INVALID_NDRANGE);
        }
        if let Some(req) = k.info.reqd_work_group_size {
            if (0..3).any(|i| local[i] != req[i] as usize) {
                return Err(CLK_INVALID_NDRANGE);
            }
        }
        Ok(NdRange {
            work_dim: dims,
            global_offset: offset,
            global_size: global,
            local_size: local,
        })
    }

    /// `enqueue_marker`: arguments as [`DeviceOp::EnqueueMarker`] lists them.
    fn marker(&self, arg: &dyn Fn(usize) -> u64) -> i32 {
        let (queue, nevents, wait_list, event_ret) = (arg(0), arg(1), arg(2), arg(3));
        if device_queue_at(queue).is_none_or(|q| !Arc::ptr_eq(&q.device, &self.origin.device)) {
            return CLK_INVALID_QUEUE;
        }
        let nevents = nevents as u32 as usize;
        if nevents == 0 || wait_list == 0 {
            return CLK_INVALID_EVENT_WAIT_LIST;
        }
        let mut st = self.state.lock();
        let (wait, event) = match self.admit(&mut st, wait_list, nevents, event_ret) {
            Ok(x) => x,
            Err(e) => return e,
        };
        st.pending.push(Child {
            launch: None,
            _block: Box::new([]),
            wait,
            event,
        });
        CLK_SUCCESS
    }

    /// `enqueue_kernel`: arguments as [`DeviceOp::EnqueueKernel`] lists them.
    fn enqueue(&self, arg: &dyn Fn(usize) -> u64) -> i32 {
        let (queue, flags, nd, nevents, wait_list, event_ret) =
            (arg(0), arg(1), arg(2), arg(3), arg(4), arg(5));
        let (name, block, nlocal, sizes) = (arg(6), arg(7), arg(8), arg(9));
        let param_size = arg(10) as u32 as usize;
        let Some(q) = device_queue_at(queue) else {
            return CLK_INVALID_QUEUE;
        };
        if !Arc::ptr_eq(&q.device, &self.origin.device) {
            return CLK_INVALID_QUEUE;
        }
        if flags > 2 {
            return CLK_INVALID_VALUE;
        }
        let nevents = nevents as u32 as usize;
        if (nevents > 0) != (wait_list != 0) {
            return CLK_INVALID_EVENT_WAIT_LIST;
        }
        let Some(k) = self.kernel_named(name) else {
            return CLK_ENQUEUE_FAILURE;
        };
        let nd = match self.ndrange_for(&k, nd) {
            Ok(nd) => nd,
            Err(e) => return e,
        };
        let info = &k.info;
        let nlocal = nlocal as u32 as usize;
        if info.args.is_empty() || info.args.len() != nlocal + 1 || (nlocal > 0 && sizes == 0) {
            return CLK_INVALID_ARG_SIZE;
        }
        // A null block literal: SPIR-V producers pass one for a block without
        // captures (its invoke kernel then gets a null pointer); clang never does.
        if block == 0 && param_size == 0 {
            return CLK_ENQUEUE_FAILURE;
        }
        // SAFETY: `block` is the block literal clang built (its size in the first 4
        // bytes) unless SPIR-V's `Param Size` gives the size; `sizes` holds `nlocal`
        // size_t values.
        let block_size = if block == 0 {
            0
        } else if param_size > 0 {
            param_size
        } else {
            unsafe { (block as *const u32).read_unaligned() as usize }
        };
        let mut copy = vec![0u64; block_size.div_ceil(8).max(1)].into_boxed_slice();
        // SAFETY: as above; the copy holds at least `block_size` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                block as *const u8,
                copy.as_mut_ptr() as *mut u8,
                block_size,
            )
        };
        let mut args = vec![0u8; info.arg_block_size];
        let a0 = info.args[0].offset;
        let literal = if block == 0 { 0 } else { copy.as_ptr() as u64 };
        args[a0..a0 + 8].copy_from_slice(&literal.to_ne_bytes());
        let mut local_args = Vec::with_capacity(nlocal);
        let mut local_total = info.static_local_bytes;
        for (i, a) in info.args[1..].iter().enumerate() {
            // SAFETY: see above.
            let size = unsafe { ((sizes as *const u64).add(i)).read_unaligned() } as usize;
            if size == 0 {
                return CLK_INVALID_ARG_SIZE;
            }
            local_total = local_total.saturating_add(size.next_multiple_of(exec::LOCAL_ARG_ALIGN));
            local_args.push(LocalArg {
                offset: a.offset,
                size,
            });
        }
        if local_total as u64 > crate::platform::LOCAL_MEM_SIZE {
            return CLK_INVALID_ARG_SIZE;
        }
        let mut st = self.state.lock();
        let (wait, event) = match self.admit(&mut st, wait_list, nevents, event_ret) {
            Ok(x) => x,
            Err(e) => return e,
        };
        st.pending.push(Child {
            launch: Some(Launch {
                kernel: k.clone(),
                args,
                local_args,
                ndrange: nd,
                threads: self.origin.device.threads(),
            }),
            _block: copy,
            wait,
            event,
        });
        CLK_SUCCESS
    }
}

/// `CL_KERNEL_WORK_GROUP_SIZE` of a kernel (as `Kernel::max_work_group_size`).
fn max_wg_size(info: &cranecl_jit::KernelInfo) -> usize {
    match (info.reqd_work_group_size, info.required_num_sub_groups) {
        (Some([x, y, z]), _) => (x as usize) * (y as usize) * (z as usize),
        (None, Some(n)) => (n as usize)
            .saturating_mul(info.sub_group_width as usize)
            .min(MAX_WORK_GROUP_SIZE),
        (None, None) => MAX_WORK_GROUP_SIZE,
    }
}

impl Session {
    /// What every command enqueued from a kernel needs before it is recorded: its wait
    /// list checked, room in the device queue, and (when `event_ret` is not 0) a new
    /// event written back to the kernel, with one reference for the kernel and one for
    /// the command.
    fn admit(
        &self,
        st: &mut State,
        wait_list: u64,
        nevents: usize,
        event_ret: u64,
    ) -> Result<(Vec<u64>, Option<u64>), i32> {
        let wait = wait_events(st, wait_list, nevents)?;
        if st.pending.len() >= self.capacity {
            return Err(CLK_DEVICE_QUEUE_FULL);
        }
        if event_ret == 0 {
            return Ok((wait, None));
        }
        let e = new_event(st, 2, false).ok_or(CLK_EVENT_ALLOCATION_FAILURE)?;
        // SAFETY: `event_ret` points at a clk_event_t of the kernel.
        unsafe { (event_ret as *mut u64).write_unaligned(e) };
        Ok((wait, Some(e)))
    }
}

/// The `nevents` live events at `wait_list` (`CLK_INVALID_EVENT_WAIT_LIST` if one is
/// not).
fn wait_events(st: &State, wait_list: u64, nevents: usize) -> Result<Vec<u64>, i32> {
    (0..nevents)
        .map(|i| {
            // SAFETY: the kernel passes `nevents` clk_event_t values (8 bytes each).
            let e = unsafe { ((wait_list as *const u64).add(i)).read_unaligned() };
            if is_live(st, e) {
                Ok(e)
            } else {
                Err(CLK_INVALID_EVENT_WAIT_LIST)
            }
        })
        .collect()
}
