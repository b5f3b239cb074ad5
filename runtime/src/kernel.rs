//! Kernels: one compiled kernel of a built program plus the argument values the
//! application set, and turning those into an [`exec::Launch`] at enqueue time.
//!
//! Arguments are snapshotted when an ND-range is enqueued: a later clSetKernelArg
//! never affects a launch already in a queue.

use std::sync::{Arc, Weak};

use crate::sync::Mutex;
use cranecl_jit::{ArgKind, CompiledKernel, KernelArg};
use opencl_sys::*;

use crate::build::kernel_info::ArgInfo;
use crate::exec::{self, LocalArg, NdRange};
use crate::memory::Mem;
use crate::object::{ApiHeader, ApiObject, ObjectKind};
use crate::platform::{Device, LOCAL_MEM_SIZE, MAX_WORK_GROUP_SIZE, MAX_WORK_ITEM_SIZES};
use crate::program::{Executable, Program, ProgramSource};
use crate::queue::{Command, LaunchTree};
use crate::CLResult;

/// The value of one kernel argument.
#[derive(Clone)]
pub enum ArgValue {
    /// A global/constant buffer, or NULL. Held weakly: a kernel argument does not
    /// keep a buffer the application released alive (its destructor callbacks run
    /// then); commands enqueued with it hold it until they complete.
    Mem(Option<Weak<Mem>>),
    /// A `__local` allocation of this many bytes.
    Local(usize),
    /// A by-value argument's bytes.
    Bytes(Vec<u8>),
    /// A shared-virtual-memory pointer for a global/constant pointer argument
    /// (clSetKernelArgSVMPointer), passed to the kernel as it is.
    Svm(usize),
}

/// A kernel object.
#[repr(C)]
pub struct Kernel {
    header: ApiHeader,
    /// The program (an implicit reference).
    pub program: Arc<Program>,
    /// The compiled code and metadata (of the first device the program was built
    /// for; every device's kernel has the same arguments).
    pub compiled: Arc<CompiledKernel>,
    /// Whether ND-ranges must use uniform work-groups (from the program's build).
    pub uniform_work_groups: bool,
    /// `clGetKernelArgInfo` answers, when the program's build kept them (OpenCL C with
    /// `-cl-kernel-arg-info`).
    pub arg_info: Option<Vec<ArgInfo>>,
    /// `CL_KERNEL_ATTRIBUTES`: the OpenCL C attributes of the kernel (empty for
    /// programs from IL, which carry no OpenCL C).
    pub attributes: String,
    /// The code for each device the program has an executable for.
    per_device: Vec<DeviceCode>,
    args: Mutex<Vec<Option<ArgValue>>>,
}

/// A kernel's code for one device of its program.
#[derive(Clone)]
struct DeviceCode {
    device: Arc<Device>,
    compiled: Arc<CompiledKernel>,
    /// The whole program's code on `device` (device-side enqueue finds children there).
    program_code: Arc<cranecl_jit::CompiledProgram>,
    uniform_work_groups: bool,
}

/// What the OpenCL C source says about a kernel beyond its SPIR-V.
struct KernelSourceInfo {
    arg_info: Option<Vec<ArgInfo>>,
    attributes: String,
}

impl KernelSourceInfo {
    /// The argument info and attributes of `kernel` in the build `exe` of `program`.
    fn of(program: &Program, exe: &Executable, kernel: &CompiledKernel) -> KernelSourceInfo {
        let source_info = exe
            .source_info
            .as_ref()
            .and_then(|t| t.get(&kernel.info.name).cloned());
        let arg_info = source_info
            .as_ref()
            .and_then(|s| s.args.clone())
            .filter(|a| a.len() == kernel.info.args.len());
        let attributes = match (&program.source, source_info) {
            (ProgramSource::Il(_), _) => String::new(),
            (_, Some(s)) => s.attributes,
            (_, None) => kernel.info.attributes.clone(),
        };
        KernelSourceInfo {
            arg_info,
            attributes,
        }
    }
}

impl ApiObject for Kernel {
    const KIND: ObjectKind = ObjectKind::Kernel;
    fn header(&self) -> &ApiHeader {
        &self.header
    }
}

/// Bytes every `__local` argument is aligned to in local memory.
const LOCAL_ARG_ALIGN: usize = 64;

/// A launch snapshot taken by [`Kernel::launch`]: what the queue runs, the buffers it
/// keeps alive until then, and for a kernel that enqueues kernels from the device,
/// what runs its children.
pub struct KernelLaunch {
    pub launch: exec::Launch,
    pub buffers: Vec<Arc<Mem>>,
    pub tree: Option<Arc<dyn LaunchTree>>,
}

impl KernelLaunch {
    /// The queue command that runs this launch.
    pub fn into_command(self) -> Command {
        Command::NdRange {
            launch: self.launch,
            buffers: self.buffers,
            tree: self.tree,
        }
    }
}

impl Kernel {
    /// `clCreateKernel`: `CL_INVALID_PROGRAM_EXECUTABLE` if the program is built for
    /// no device, `CL_INVALID_KERNEL_NAME` if it has no such kernel,
    /// `CL_INVALID_KERNEL_DEFINITION` if the devices' builds disagree on it.
    pub fn new(program: &Arc<Program>, name: &str) -> CLResult<Arc<Kernel>> {
        let executables = program.executables();
        let Some(first) = executables.first() else {
            return Err(CL_INVALID_PROGRAM_EXECUTABLE);
        };
        // The hidden invoke kernels of SPIR-V device enqueue are no kernels of the API.
        let first_kernel = first
            .compiled
            .kernel(name)
            .filter(|_| !cranecl_jit::device_enqueue::is_hidden_kernel(name))
            .ok_or(CL_INVALID_KERNEL_NAME)?;
        let source = KernelSourceInfo::of(program, first, first_kernel);
        let mut per_device = Vec::with_capacity(executables.len());
        for exe in &executables {
            let kernel = exe
                .compiled
                .kernel(name)
                .filter(|k| same_definition(first_kernel, k))
                .ok_or(CL_INVALID_KERNEL_DEFINITION)?;
            per_device.push(DeviceCode {
                device: Arc::clone(&exe.device),
                compiled: kernel.clone(),
                program_code: exe.compiled.clone(),
                uniform_work_groups: exe.uniform_work_groups,
            });
        }
        Ok(Self::from_parts(program.clone(), per_device, source, None))
    }

    fn from_parts(
        program: Arc<Program>,
        per_device: Vec<DeviceCode>,
        source: KernelSourceInfo,
        args: Option<Vec<Option<ArgValue>>>,
    ) -> Arc<Kernel> {
        let first = per_device[0].clone();
        let n = first.compiled.info.args.len();
        program.kernel_created();
        Arc::new(Kernel {
            header: ApiHeader::new(ObjectKind::Kernel),
            program,
            compiled: first.compiled,
            uniform_work_groups: first.uniform_work_groups,
            arg_info: source.arg_info,
            attributes: source.attributes,
            per_device,
            args: Mutex::new(args.unwrap_or_else(|| vec![None; n])),
        })
    }

    /// `clCreateKernelsInProgram`: one kernel per entry point, in module order.
    pub fn all(program: &Arc<Program>) -> CLResult<Vec<Arc<Kernel>>> {
        let names = program
            .kernel_names()
            .ok_or(CL_INVALID_PROGRAM_EXECUTABLE)?;
        names.iter().map(|n| Self::new(program, n)).collect()
    }

    /// `clCloneKernel`: same kernel, copies of the argument values.
    pub fn clone_kernel(&self) -> Arc<Kernel> {
        let args = self.args.lock().clone();
        let source = KernelSourceInfo {
            arg_info: self.arg_info.clone(),
            attributes: self.attributes.clone(),
        };
        Self::from_parts(
            self.program.clone(),
            self.per_device.clone(),
            source,
            Some(args),
        )
    }

    /// The devices the kernel can run on (those its program has an executable for).
    pub fn devices(&self) -> impl Iterator<Item = &Arc<Device>> {
        self.per_device.iter().map(|c| &c.device)
    }

    /// The code for `device`: `CL_INVALID_PROGRAM_EXECUTABLE` if the program was not
    /// built for it.
    fn code_for(&self, device: &Device) -> CLResult<&DeviceCode> {
        self.per_device
            .iter()
            .find(|c| std::ptr::eq(&*c.device, device))
            .ok_or(CL_INVALID_PROGRAM_EXECUTABLE)
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.compiled.info.name
    }

    /// Parameter `index` (`CL_INVALID_ARG_INDEX`).
    pub fn arg(&self, index: u32) -> CLResult<&KernelArg> {
        self.compiled
            .info
            .args
            .get(index as usize)
            .ok_or(CL_INVALID_ARG_INDEX)
    }

    /// `clSetKernelArg` after the C layer resolved buffer handles: checks the value
    /// matches the parameter's kind and size.
    pub fn set_arg(&self, index: u32, size: usize, value: ArgValue) -> CLResult<()> {
        let arg = self.arg(index)?;
        match (arg.kind, &value) {
            (ArgKind::GlobalPtr | ArgKind::ConstantPtr | ArgKind::Pipe, ArgValue::Mem(_)) => {
                if size != std::mem::size_of::<cl_mem>() {
                    return Err(CL_INVALID_ARG_SIZE);
                }
            }
            (ArgKind::Pipe, _) => return Err(CL_INVALID_ARG_VALUE),
            (ArgKind::GlobalPtr | ArgKind::ConstantPtr, ArgValue::Svm(_)) => {}
            // OpenCL 3.1 allows a size of zero (CL_INVALID_ARG_SIZE before): the
            // argument takes no __local memory and points where the next one does
            // (the pointer's value is implementation-defined).
            (ArgKind::LocalPtr, ArgValue::Local(_)) => {}
            (ArgKind::LocalPtr, _) => return Err(CL_INVALID_ARG_VALUE),
            (ArgKind::Value, ArgValue::Bytes(b)) => {
                if b.len() != arg.size || size != arg.size {
                    return Err(CL_INVALID_ARG_SIZE);
                }
            }
            (ArgKind::Value, _) => return Err(CL_INVALID_ARG_VALUE),
            // The C layer checked the handle: the bytes are a device queue's address.
            (ArgKind::Queue, ArgValue::Bytes(b)) if b.len() == 8 && size == 8 => {}
            (ArgKind::Queue, _) => return Err(CL_INVALID_DEVICE_QUEUE),
            (ArgKind::Sampler, _) => return Err(CL_INVALID_SAMPLER),
            (ArgKind::Image, _) => return Err(CL_INVALID_MEM_OBJECT),
            (ArgKind::GlobalPtr | ArgKind::ConstantPtr, _) => return Err(CL_INVALID_ARG_VALUE),
        }
        let mut args = self.args.lock();
        if let Some(slot) = args.get_mut(index as usize) {
            *slot = Some(value);
        }
        Ok(())
    }

    /// Bytes of `__local` memory a launch needs: kernel-scope variables plus every
    /// `__local` argument (each 64-byte aligned).
    pub fn local_mem_size(&self) -> usize {
        let args = self.args.lock();
        let mut total = self
            .compiled
            .info
            .static_local_bytes
            .next_multiple_of(LOCAL_ARG_ALIGN);
        for v in args.iter().flatten() {
            if let ArgValue::Local(n) = v {
                total += n.next_multiple_of(LOCAL_ARG_ALIGN);
            }
        }
        total
    }

    /// The sub-group size the kernel requires (`intel_reqd_sub_group_size`), 0 if none
    /// (`CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL`).
    pub fn required_sub_group_size(&self) -> usize {
        self.compiled
            .info
            .attributes
            .split_whitespace()
            .find_map(|a| {
                a.strip_prefix("intel_reqd_sub_group_size(")?
                    .strip_suffix(')')?
                    .parse()
                    .ok()
            })
            .unwrap_or(0)
    }

    /// Sub-groups in a work-group of `local` work-items
    /// (`CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE`): the jit's linear mapping, so the
    /// answer always equals what `get_num_sub_groups()` returns in the kernel.
    pub fn sub_group_count(&self, local: [usize; 3]) -> usize {
        self.compiled.info.num_sub_groups(local)
    }

    /// `CL_KERNEL_WORK_GROUP_SIZE`.
    pub fn max_work_group_size(&self) -> usize {
        let info = &self.compiled.info;
        match (info.reqd_work_group_size, info.required_num_sub_groups) {
            (Some([x, y, z]), _) => (x as usize) * (y as usize) * (z as usize),
            // More work-items would make another sub-group.
            (None, Some(n)) => (n as usize)
                .saturating_mul(info.sub_group_width as usize)
                .min(MAX_WORK_GROUP_SIZE),
            (None, None) => MAX_WORK_GROUP_SIZE,
        }
    }

    /// Validates an ND-range against the kernel and device and picks the local size
    /// when the application gave none.
    pub fn ndrange(
        &self,
        device: &Device,
        work_dim: u32,
        offset: Option<[usize; 3]>,
        global: [usize; 3],
        local: Option<[usize; 3]>,
    ) -> CLResult<NdRange> {
        if !(1..=3).contains(&work_dim) {
            return Err(CL_INVALID_WORK_DIMENSION);
        }
        let dims = work_dim as usize;
        let offset = offset.unwrap_or([0; 3]);
        for d in 0..dims {
            if global[d].checked_add(offset[d]).is_none() {
                return Err(CL_INVALID_GLOBAL_OFFSET);
            }
        }
        let code = self.code_for(device)?;
        let info = &code.compiled.info;
        let uniform = code.uniform_work_groups;
        let local = match local {
            Some(l) => {
                if let Some(req) = info.reqd_work_group_size {
                    if (0..3).any(|d| l[d] != req[d] as usize) {
                        return Err(CL_INVALID_WORK_GROUP_SIZE);
                    }
                }
                if (0..dims).any(|d| l[d] == 0) {
                    return Err(CL_INVALID_WORK_GROUP_SIZE);
                }
                if (0..dims).any(|d| l[d] > MAX_WORK_ITEM_SIZES[d]) {
                    return Err(CL_INVALID_WORK_ITEM_SIZE);
                }
                if l.iter().product::<usize>() > self.max_work_group_size() {
                    return Err(CL_INVALID_WORK_GROUP_SIZE);
                }
                if uniform && (0..dims).any(|d| !global[d].is_multiple_of(l[d])) {
                    return Err(CL_INVALID_WORK_GROUP_SIZE);
                }
                l
            }
            None => {
                let mut l = if global[..dims].contains(&0) {
                    [1; 3]
                } else {
                    exec::choose_local_size(
                        info,
                        work_dim,
                        global,
                        self.max_work_group_size(),
                        device.threads(),
                    )
                };
                for d in 0..3 {
                    l[d] = l[d].max(1);
                    if d >= dims {
                        l[d] = 1;
                    } else if uniform
                        && info.reqd_work_group_size.is_none()
                        && info.required_num_sub_groups.is_none()
                    {
                        // The chosen size must divide the global size for CL1.x builds.
                        while !global[d].is_multiple_of(l[d]) {
                            l[d] -= 1;
                        }
                    }
                }
                if uniform && (0..dims).any(|d| !global[d].is_multiple_of(l[d])) {
                    // Only possible with reqd_work_group_size or a required number of
                    // sub-groups: the size is fixed.
                    return Err(CL_INVALID_WORK_GROUP_SIZE);
                }
                l
            }
        };
        if let Some(n) = info.required_num_sub_groups {
            if info.num_sub_groups(local) != n as usize {
                return Err(CL_INVALID_WORK_GROUP_SIZE);
            }
        }
        // The work-group count must be representable (the engine hands groups out by
        // a linear index).
        let groups = (0..dims).try_fold(1usize, |acc, d| {
            acc.checked_mul(global[d].div_ceil(local[d]))
        });
        if groups.is_none_or(|n| n > usize::MAX / 4) {
            return Err(CL_INVALID_GLOBAL_WORK_SIZE);
        }
        let mut g = [1usize; 3];
        g[..dims].copy_from_slice(&global[..dims]);
        let mut o = [0usize; 3];
        o[..dims].copy_from_slice(&offset[..dims]);
        Ok(NdRange {
            work_dim,
            global_offset: o,
            global_size: g,
            local_size: local,
        })
    }

    /// Snapshots the arguments into a launch: `CL_INVALID_KERNEL_ARGS` if one is unset,
    /// `CL_OUT_OF_RESOURCES` if the `__local` memory exceeds the device's.
    /// The launch runs `device`'s code on at most its compute units
    /// (`CL_INVALID_PROGRAM_EXECUTABLE` if the program was not built for it).
    pub fn launch(&self, device: &Device, ndrange: NdRange) -> CLResult<KernelLaunch> {
        let code = self.code_for(device)?;
        let info = &code.compiled.info;
        let values = self.args.lock();
        let mut block = vec![0u8; info.arg_block_size];
        let mut buffers = Vec::new();
        let mut local_args = Vec::new();
        let mut local_total = info.static_local_bytes.next_multiple_of(LOCAL_ARG_ALIGN);
        for (arg, value) in info.args.iter().zip(values.iter()) {
            let value = value.as_ref().ok_or(CL_INVALID_KERNEL_ARGS)?;
            match value {
                ArgValue::Mem(mem) => {
                    // A buffer released since clSetKernelArg is no argument any more.
                    let mem = match mem {
                        Some(w) => Some(w.upgrade().ok_or(CL_INVALID_KERNEL_ARGS)?),
                        None => None,
                    };
                    let ptr = mem.as_ref().map_or(0u64, |m| m.ptr() as u64);
                    write_at(&mut block, arg.offset, &ptr.to_ne_bytes())?;
                    buffers.extend(mem);
                }
                &ArgValue::Svm(ptr) => {
                    write_at(&mut block, arg.offset, &(ptr as u64).to_ne_bytes())?
                }
                &ArgValue::Local(size) => {
                    // Any size_t is accepted by clSetKernelArg: sum without wrapping.
                    local_total = size
                        .checked_next_multiple_of(LOCAL_ARG_ALIGN)
                        .and_then(|s| local_total.checked_add(s))
                        .ok_or(CL_OUT_OF_RESOURCES)?;
                    local_args.push(LocalArg {
                        offset: arg.offset,
                        size,
                    });
                }
                ArgValue::Bytes(bytes) => write_at(&mut block, arg.offset, bytes)?,
            }
        }
        drop(values);
        if local_total as u64 > LOCAL_MEM_SIZE {
            return Err(CL_OUT_OF_RESOURCES);
        }
        let tree = info.device_enqueue.then(|| {
            Arc::new(crate::device_enqueue::Origin {
                program: code.program_code.clone(),
                device: code.device.clone(),
                context: self.program.context.clone(),
            }) as Arc<dyn LaunchTree>
        });
        Ok(KernelLaunch {
            launch: exec::Launch {
                kernel: Arc::clone(&code.compiled),
                args: block,
                local_args,
                ndrange,
                threads: device.threads(),
            },
            buffers,
            tree,
        })
    }
}

/// Whether two devices' builds of a kernel take the same arguments.
fn same_definition(a: &CompiledKernel, b: &CompiledKernel) -> bool {
    a.info.args.len() == b.info.args.len()
        && a.info.args.iter().zip(&b.info.args).all(|(x, y)| {
            x.kind == y.kind && x.size == y.size && x.address_qualifier == y.address_qualifier
        })
}

fn write_at(block: &mut [u8], offset: usize, bytes: &[u8]) -> CLResult<()> {
    let end = offset.checked_add(bytes.len()).ok_or(CL_INVALID_KERNEL)?;
    block
        .get_mut(offset..end)
        .ok_or(CL_INVALID_KERNEL)?
        .copy_from_slice(bytes);
    Ok(())
}

impl Drop for Kernel {
    fn drop(&mut self) {
        self.program.kernel_dropped();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::Context;
    use crate::platform::Platform;
    use crate::queue::{Command, HostPtr, Queue};
    use cranecl_jit::abi::WorkGroupState;
    use cranecl_jit::{AddressQualifier, CompiledProgram, KernelInfo};

    /// `kernel void k(global uint* out, uint add, local int* scratch)`: writes
    /// `linear global id + add` for every work-item of the group.
    unsafe extern "C" fn ids_plus(args: *const u8, wg: *const WorkGroupState) {
        // SAFETY: the runtime passes the block laid out by `info()` and a filled state.
        unsafe {
            let wg = &*wg;
            let nd = &*wg.ndrange;
            let out = args.cast::<*mut u32>().read_unaligned();
            let add = args.add(8).cast::<u32>().read_unaligned();
            let scratch = args.add(16).cast::<*mut i32>().read_unaligned();
            assert!(!scratch.is_null());
            for z in 0..wg.local_size[2] {
                for y in 0..wg.local_size[1] {
                    for x in 0..wg.local_size[0] {
                        let l = [x, y, z];
                        let g: Vec<u64> = (0..3)
                            .map(|d| {
                                wg.group_id[d] * nd.enqueued_local_size[d]
                                    + l[d]
                                    + nd.global_offset[d]
                            })
                            .collect();
                        let lin =
                            (g[2] - nd.global_offset[2]) * nd.global_size[1] * nd.global_size[0]
                                + (g[1] - nd.global_offset[1]) * nd.global_size[0]
                                + (g[0] - nd.global_offset[0]);
                        *out.add(lin as usize) = g[0] as u32 + add;
                    }
                }
            }
        }
    }

    fn arg(kind: ArgKind, size: usize, offset: usize, aq: AddressQualifier) -> KernelArg {
        KernelArg {
            name: String::new(),
            kind,
            address_qualifier: aq,
            size,
            offset,
        }
    }

    fn info(reqd: Option<[u32; 3]>) -> KernelInfo {
        KernelInfo {
            args: vec![
                arg(ArgKind::GlobalPtr, 8, 0, AddressQualifier::Global),
                arg(ArgKind::Value, 4, 8, AddressQualifier::Private),
                arg(ArgKind::LocalPtr, 8, 16, AddressQualifier::Local),
            ],
            arg_block_size: 24,
            reqd_work_group_size: reqd,
            ..KernelInfo::new("k", 8)
        }
    }

    fn root() -> &'static Device {
        Platform::get().device()
    }

    fn kernel(uniform: bool, reqd: Option<[u32; 3]>) -> (Arc<Queue>, Arc<Kernel>) {
        let device = Platform::get().device().clone();
        let ctx = Context::new(vec![device.clone()], Vec::new(), None);
        let compiled = CompiledKernel::new(info(reqd), ids_plus, Arc::new(()));
        let program = Program::prebuilt(
            ctx.clone(),
            CompiledProgram {
                kernels: vec![Arc::new(compiled)],
                global_variable_bytes: 0,
            },
            uniform,
        );
        let k = Kernel::new(&program, "k").expect("kernel");
        (Queue::new(ctx, device, 0, Vec::new()), k)
    }

    #[test]
    fn a_launch_on_a_sub_device_gets_its_code_and_its_compute_units() {
        let root = Platform::get().device().clone();
        let sub = crate::platform::Device::sub_device(&root, vec![0], vec![0x1086, 1, 0]);
        let ctx = Context::new(vec![sub.clone(), root.clone()], Vec::new(), None);
        let compiled = CompiledKernel::new(info(None), ids_plus, Arc::new(()));
        let program = Program::prebuilt(
            ctx,
            CompiledProgram {
                kernels: vec![Arc::new(compiled)],
                global_variable_bytes: 0,
            },
            false,
        );
        let k = Kernel::new(&program, "k").expect("kernel");
        assert_eq!(k.devices().count(), 2);
        k.set_arg(1, 4, ArgValue::Bytes(vec![0; 4])).expect("arg 1");
        k.set_arg(2, 8, ArgValue::Local(16)).expect("arg 2");
        k.set_arg(0, 8, ArgValue::Mem(None)).expect("arg 0");
        let nd = k.ndrange(&sub, 1, None, [64, 1, 1], None).expect("ndrange");
        let launch = k.launch(&sub, nd).expect("launch on the sub-device").launch;
        assert_eq!(launch.threads, 1, "one compute unit, one thread");
        let launch = k
            .launch(&root, nd)
            .expect("launch on the root device")
            .launch;
        assert_eq!(launch.threads, root.compute_units as usize);
        let stranger = crate::platform::Device::sub_device(&root, vec![0], vec![0x1086, 1, 0]);
        assert_eq!(
            k.launch(&stranger, nd).err(),
            Some(CL_INVALID_PROGRAM_EXECUTABLE),
            "a device the program was not built for"
        );
    }

    #[test]
    fn argument_validation() {
        let (_, k) = kernel(true, None);
        assert_eq!(
            Kernel::new(&k.program, "nope").err(),
            Some(CL_INVALID_KERNEL_NAME)
        );
        assert_eq!(
            k.set_arg(3, 4, ArgValue::Bytes(vec![0; 4])),
            Err(CL_INVALID_ARG_INDEX)
        );
        assert_eq!(
            k.set_arg(1, 8, ArgValue::Bytes(vec![0; 8])),
            Err(CL_INVALID_ARG_SIZE)
        );
        // OpenCL 3.1: a zero-size __local argument is valid and takes no memory.
        k.set_arg(2, 0, ArgValue::Local(0))
            .expect("zero-size local");
        assert_eq!(
            k.local_mem_size(),
            k.compiled
                .info
                .static_local_bytes
                .next_multiple_of(LOCAL_ARG_ALIGN)
        );
        assert_eq!(
            k.set_arg(0, 4, ArgValue::Mem(None)),
            Err(CL_INVALID_ARG_SIZE)
        );
        assert_eq!(
            k.set_arg(1, 4, ArgValue::Local(4)),
            Err(CL_INVALID_ARG_VALUE)
        );
        let nd = k
            .ndrange(root(), 1, None, [16, 1, 1], Some([8, 1, 1]))
            .expect("ndrange");
        assert_eq!(k.launch(root(), nd).err(), Some(CL_INVALID_KERNEL_ARGS));
        k.set_arg(0, 8, ArgValue::Mem(None)).expect("null buffer");
        k.set_arg(1, 4, ArgValue::Bytes(vec![1, 2, 3, 4]))
            .expect("value");
        k.set_arg(2, 100, ArgValue::Local(100)).expect("local");
        assert_eq!(k.local_mem_size(), 128);
        let KernelLaunch {
            launch, buffers, ..
        } = k.launch(root(), nd).expect("launch");
        assert!(buffers.is_empty());
        assert_eq!(&launch.args[8..12], &[1, 2, 3, 4]);
        assert_eq!(
            launch.local_args,
            vec![LocalArg {
                offset: 16,
                size: 100
            }]
        );
        // A later clSetKernelArg does not change the snapshot.
        k.set_arg(1, 4, ArgValue::Bytes(vec![9, 9, 9, 9]))
            .expect("value");
        assert_eq!(&launch.args[8..12], &[1, 2, 3, 4]);
        let too_big = LOCAL_MEM_SIZE as usize + 1;
        k.set_arg(2, too_big, ArgValue::Local(too_big))
            .expect("local");
        assert_eq!(k.launch(root(), nd).err(), Some(CL_OUT_OF_RESOURCES));
        let clone = k.clone_kernel();
        assert_eq!(clone.local_mem_size(), k.local_mem_size());
        assert_eq!(
            k.program.build(None, "").err(),
            Some(CL_INVALID_OPERATION),
            "kernels are attached"
        );
    }

    #[test]
    fn ndrange_validation() {
        let (_, k) = kernel(true, None);
        assert_eq!(
            k.ndrange(root(), 0, None, [1; 3], None).err(),
            Some(CL_INVALID_WORK_DIMENSION)
        );
        assert_eq!(
            k.ndrange(root(), 4, None, [1; 3], None).err(),
            Some(CL_INVALID_WORK_DIMENSION)
        );
        assert_eq!(
            k.ndrange(root(), 1, None, [10, 1, 1], Some([4, 1, 1]))
                .err(),
            Some(CL_INVALID_WORK_GROUP_SIZE)
        );
        assert_eq!(
            k.ndrange(root(), 1, None, [2048, 1, 1], Some([2048, 1, 1]))
                .err(),
            Some(CL_INVALID_WORK_ITEM_SIZE)
        );
        assert_eq!(
            k.ndrange(root(), 2, None, [64, 64, 1], Some([64, 32, 1]))
                .err(),
            Some(CL_INVALID_WORK_GROUP_SIZE)
        );
        assert_eq!(
            k.ndrange(root(), 1, Some([usize::MAX, 0, 0]), [2, 1, 1], None)
                .err(),
            Some(CL_INVALID_GLOBAL_OFFSET)
        );
        let nd = k
            .ndrange(root(), 2, Some([3, 4, 9]), [12, 5, 7], Some([4, 5, 1]))
            .expect("2-D");
        assert_eq!(nd.global_size, [12, 5, 1]);
        assert_eq!(nd.global_offset, [3, 4, 0]);
        assert_eq!(nd.local_size, [4, 5, 1]);
        let (_, nonuniform) = kernel(false, None);
        assert!(nonuniform
            .ndrange(root(), 1, None, [10, 1, 1], Some([4, 1, 1]))
            .is_ok());
        let (_, reqd) = kernel(true, Some([4, 2, 1]));
        assert_eq!(reqd.max_work_group_size(), 8);
        assert_eq!(
            reqd.ndrange(root(), 2, None, [8, 8, 1], Some([8, 1, 1]))
                .err(),
            Some(CL_INVALID_WORK_GROUP_SIZE)
        );
        assert_eq!(
            reqd.ndrange(root(), 2, None, [8, 8, 1], Some([4, 2, 1]))
                .map(|n| n.local_size),
            Ok([4, 2, 1])
        );
    }

    #[test]
    fn chosen_local_size_divides_global_for_uniform_builds() {
        let (_, k) = kernel(true, None);
        for g in [1usize, 7, 13, 100, 1000, 1031, 4096] {
            let nd = k
                .ndrange(root(), 1, None, [g, 1, 1], None)
                .expect("ndrange");
            assert_eq!(
                g % nd.local_size[0],
                0,
                "global {g} local {:?}",
                nd.local_size
            );
            assert!(nd.local_size[0] <= MAX_WORK_GROUP_SIZE);
        }
    }

    #[test]
    fn launch_runs_through_the_queue() {
        let (q, k) = kernel(false, None);
        let n = 1000usize;
        // SAFETY: no host pointer.
        let mem = unsafe {
            Mem::new_buffer(
                q.context.clone(),
                CL_MEM_READ_WRITE,
                n * 4,
                std::ptr::null_mut(),
                Vec::new(),
            )
        }
        .expect("buffer");
        k.set_arg(0, 8, ArgValue::Mem(Some(Arc::downgrade(&mem))))
            .expect("buffer arg");
        k.set_arg(1, 4, ArgValue::Bytes(5u32.to_ne_bytes().to_vec()))
            .expect("value");
        k.set_arg(2, 64, ArgValue::Local(64)).expect("local");
        let nd = k
            .ndrange(root(), 1, Some([10, 0, 0]), [n, 1, 1], Some([64, 1, 1]))
            .expect("ndrange");
        let run = k.launch(root(), nd).expect("launch");
        q.enqueue(CL_COMMAND_NDRANGE_KERNEL, run.into_command(), &[], false)
            .expect("enqueue");
        let mut out = vec![0u32; n];
        q.enqueue(
            CL_COMMAND_READ_BUFFER,
            Command::Read {
                mem,
                offset: 0,
                size: n * 4,
                dst: HostPtr(out.as_mut_ptr().cast()),
            },
            &[],
            true,
        )
        .expect("read");
        let want: Vec<u32> = (0..n as u32).map(|i| i + 10 + 5).collect();
        assert_eq!(out, want);
    }
}
