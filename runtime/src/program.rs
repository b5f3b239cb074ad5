//! Programs: OpenCL C source, SPIR-V or our binary in; a built executable (the jit's
//! [`CompiledProgram`]) out, with the build log and status the application can query.
//!
//! The build runs on the calling thread (clBuildProgram is synchronous here; the
//! `pfn_notify` is called after it) and never holds the program's lock while clang or
//! the jit run. Our binary format (`CL_PROGRAM_BINARIES`) is a small header, the build
//! options, and the SPIR-V words: enough to rebuild.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::sync::Mutex;
use cranecl_jit::{CompileOptions, CompiledProgram};
use opencl_sys::*;

use crate::build::kernel_info::SourceInfoTable;
use crate::build::{self, BuildOptions, LinkOptions, SourceBuildError};
use crate::context::Context;
use crate::object::{ApiHeader, ApiObject, ObjectKind};
use crate::platform::Device;
use crate::CLResult;

mod device_builds;

use device_builds::DeviceBuilds;
pub use device_builds::LoadedBinary;

/// First bytes of a cranecl program binary.
pub const BINARY_MAGIC: &[u8; 8] = b"CRANECL\x02";

/// Bit of a binary's type word: the code was built for uniform work-groups (an
/// OpenCL C 1.x source, `-cl-uniform-work-group-size`). A program created from the
/// binary and built with its own options keeps that, as the source build did: the
/// same kernels, enqueued with the same rules and compiled for full sub-groups
/// (pyopencl's cache hands programs back as binaries). Older binaries lack the bit.
const BINARY_UNIFORM_WORK_GROUPS: u32 = 1 << 16;

/// Where the program's code came from.
#[derive(Clone, Debug)]
pub enum ProgramSource {
    /// OpenCL C.
    Source(String),
    /// SPIR-V words (clCreateProgramWithIL).
    Il(Vec<u32>),
    /// Our binaries, one per device (see [`Program::with_binaries`]).
    Binary,
    /// The output of clLinkProgram.
    Linked,
}

/// Build status and results, as the queries report them.
#[derive(Clone)]
pub struct BuildState {
    /// `CL_PROGRAM_BUILD_STATUS`.
    pub status: cl_build_status,
    /// `CL_PROGRAM_BUILD_OPTIONS`.
    pub options: String,
    /// `CL_PROGRAM_BUILD_LOG`.
    pub log: String,
    /// `CL_PROGRAM_BINARY_TYPE`.
    pub binary_type: cl_program_binary_type,
    /// The SPIR-V of the last successful build (for binaries).
    pub spirv: Option<Arc<Vec<u32>>>,
    /// The executable.
    pub compiled: Option<Arc<CompiledProgram>>,
    /// Whether ND-ranges must use uniform work-groups (OpenCL C 1.x builds and
    /// `-cl-uniform-work-group-size`).
    pub uniform_work_groups: bool,
    /// What the OpenCL C source declares about its kernels beyond SPIR-V (argument
    /// information only with `-cl-kernel-arg-info`, as the specification says;
    /// attribute text when the source uses `vec_type_hint`). Linked programs keep
    /// their objects'.
    pub source_info: Option<Arc<SourceInfoTable>>,
}

/// One device's executable, as kernels need it.
pub struct Executable {
    /// The device it was built for.
    pub device: Arc<Device>,
    /// The code.
    pub compiled: Arc<CompiledProgram>,
    /// Whether ND-ranges must use uniform work-groups.
    pub uniform_work_groups: bool,
    /// What the source declares beyond SPIR-V (see [`BuildState::source_info`]).
    pub source_info: Option<Arc<SourceInfoTable>>,
}

/// A program object.
#[repr(C)]
pub struct Program {
    header: ApiHeader,
    /// The context (an implicit reference).
    pub context: Arc<Context>,
    /// The input.
    pub source: ProgramSource,
    /// The devices and their build states.
    builds: DeviceBuilds,
    /// Kernel objects currently alive for this program (building is refused while > 0).
    kernels: AtomicUsize,
    /// `clSetProgramSpecializationConstant` values (little-endian bytes by SpecId),
    /// applied to the SPIR-V at each build.
    spec_values: Mutex<BTreeMap<u32, Vec<u8>>>,
}

impl ApiObject for Program {
    const KIND: ObjectKind = ObjectKind::Program;
    fn header(&self) -> &ApiHeader {
        &self.header
    }
}

/// What one build produced: the SPIR-V, the executable, the log and whether
/// ND-ranges must use uniform work-groups; or the error code and the log.
type BuildOutcome = Result<(Vec<u32>, CompiledProgram, String, bool), (cl_int, String)>;

/// What a build shares between the devices it applies to.
type SharedBuild = (
    Arc<Vec<u32>>,
    Arc<CompiledProgram>,
    String,
    bool,
    Option<Arc<SourceInfoTable>>,
);

impl Program {
    /// A program for every device of `context`, not built yet.
    pub fn new(context: Arc<Context>, source: ProgramSource) -> Arc<Program> {
        let devices = context.devices.clone();
        let loaded = vec![None; devices.len()];
        Self::with_devices(context, source, devices, loaded)
    }

    /// `clCreateProgramWithBinary`: a program for `devices` (of `context`), each with
    /// the binary it was given.
    pub fn with_binaries(
        context: Arc<Context>,
        devices: Vec<Arc<Device>>,
        binaries: Vec<LoadedBinary>,
    ) -> Arc<Program> {
        let loaded = binaries.into_iter().map(Some).collect();
        Self::with_devices(context, ProgramSource::Binary, devices, loaded)
    }

    fn with_devices(
        context: Arc<Context>,
        source: ProgramSource,
        devices: Vec<Arc<Device>>,
        loaded: Vec<Option<LoadedBinary>>,
    ) -> Arc<Program> {
        Arc::new(Program {
            header: ApiHeader::new(ObjectKind::Program),
            context,
            source,
            builds: DeviceBuilds::new(devices, loaded),
            kernels: AtomicUsize::new(0),
            spec_values: Mutex::new(BTreeMap::new()),
        })
    }

    /// A program already built from `compiled` for every device of `context` (tests
    /// with hand-made kernels).
    #[cfg(test)]
    pub(crate) fn prebuilt(
        context: Arc<Context>,
        compiled: CompiledProgram,
        uniform_work_groups: bool,
    ) -> Arc<Program> {
        let p = Program::new(context, ProgramSource::Il(Vec::new()));
        let compiled = Arc::new(compiled);
        let all = p.builds.targets(None);
        p.builds.finish(&all, |st| {
            st.status = CL_BUILD_SUCCESS;
            st.binary_type = CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
            st.compiled = Some(Arc::clone(&compiled));
            st.uniform_work_groups = uniform_work_groups;
        });
        p
    }

    /// `CL_PROGRAM_DEVICES`: the devices the program is for.
    pub fn devices(&self) -> &[Arc<Device>] {
        self.builds.devices()
    }

    /// The devices of `list` if they are all the program's (`None` for `None`):
    /// `CL_INVALID_DEVICE` otherwise.
    pub fn check_devices(&self, list: Option<&[Arc<Device>]>) -> CLResult<()> {
        match list {
            Some(l) if l.iter().any(|d| self.builds.index_of(d).is_none()) => {
                Err(CL_INVALID_DEVICE)
            }
            _ => Ok(()),
        }
    }

    /// The build state of `device` (`None` if the program is not for it).
    pub fn device_state(&self, device: &Device) -> Option<BuildState> {
        self.builds.index_of(device).map(|i| self.builds.state(i))
    }

    /// Every device that has an executable, with it, in device order.
    pub fn executables(&self) -> Vec<Executable> {
        self.devices()
            .iter()
            .zip(self.builds.all())
            .filter_map(|(d, st)| {
                let compiled = st.compiled.filter(|_| st.status == CL_BUILD_SUCCESS)?;
                Some(Executable {
                    device: Arc::clone(d),
                    compiled,
                    uniform_work_groups: st.uniform_work_groups,
                    source_info: st.source_info,
                })
            })
            .collect()
    }

    /// The executable of the first device that has one.
    pub fn compiled(&self) -> Option<Arc<CompiledProgram>> {
        self.executables().into_iter().next().map(|e| e.compiled)
    }

    /// Kernel objects created from this program.
    pub fn attached_kernels(&self) -> usize {
        self.kernels.load(Ordering::Acquire)
    }

    pub(crate) fn kernel_created(&self) {
        self.kernels.fetch_add(1, Ordering::AcqRel);
    }

    pub(crate) fn kernel_dropped(&self) {
        self.kernels.fetch_sub(1, Ordering::AcqRel);
    }

    /// `clSetProgramSpecializationConstant`: records `value` for `spec_id`, used by
    /// every later build. `CL_INVALID_PROGRAM` unless the program came from IL,
    /// `CL_INVALID_SPEC_ID` for an id the module does not declare, `CL_INVALID_VALUE`
    /// for a size other than the constant's (1 for booleans).
    pub fn set_spec_constant(&self, spec_id: u32, value: &[u8]) -> CLResult<()> {
        if self.spec_constant_size(spec_id)? != value.len() {
            return Err(CL_INVALID_VALUE);
        }
        self.spec_values.lock().insert(spec_id, value.to_vec());
        Ok(())
    }

    /// The size in bytes of specialization constant `spec_id` (1 for booleans):
    /// `CL_INVALID_PROGRAM` unless the program came from IL, `CL_INVALID_SPEC_ID` if
    /// the module declares no such constant.
    pub fn spec_constant_size(&self, spec_id: u32) -> CLResult<usize> {
        let ProgramSource::Il(words) = &self.source else {
            return Err(CL_INVALID_PROGRAM);
        };
        cranecl_jit::spirv::spec_constants(words)
            .map_err(|_| CL_INVALID_SPEC_ID)?
            .iter()
            .find(|c| c.spec_id == spec_id)
            .map(|c| c.size)
            .ok_or(CL_INVALID_SPEC_ID)
    }

    /// `clBuildProgram` for `devices` (all of the program's for `None`, see
    /// [`DeviceBuilds::targets`]): compiles once per distinct input and records
    /// status and log per device.
    pub fn build(&self, devices: Option<&[Arc<Device>]>, options: &str) -> CLResult<()> {
        self.check_devices(devices)?;
        if self.attached_kernels() > 0 {
            return Err(CL_INVALID_OPERATION);
        }
        let targets = self.builds.targets(devices);
        self.builds.begin(&targets, options)?;
        // Devices loaded from different binaries build separately; all others share
        // one build.
        let mut groups: Vec<(Option<&LoadedBinary>, Vec<usize>)> = Vec::new();
        for &i in &targets {
            let loaded = self.builds.loaded(i);
            let same = |g: &Option<&LoadedBinary>| match (g, loaded) {
                (Some(a), Some(b)) => {
                    Arc::ptr_eq(&a.spirv, &b.spirv)
                        || (a.spirv == b.spirv && a.options == b.options)
                }
                (None, None) => true,
                _ => false,
            };
            match groups.iter_mut().find(|(g, _)| same(g)) {
                Some((_, members)) => members.push(i),
                None => groups.push((loaded, vec![i])),
            }
        }
        let mut result = Ok(());
        for (loaded, members) in groups {
            // The source information (argument info, attributes) needs a clang run
            // of its own: it runs beside the build instead of after it.
            let (built, info) = std::thread::scope(|s| {
                let info = std::thread::Builder::new()
                    .name("cranecl-arginfo".into())
                    .spawn_scoped(s, || self.source_info_for(options, &[]));
                let built = self.run_build(options, loaded);
                let info = match info {
                    Ok(handle) => handle.join().unwrap_or_else(|_| {
                        Err((
                            CL_OUT_OF_HOST_MEMORY,
                            "cranecl: reading the kernels' argument information failed\n"
                                .to_string(),
                        ))
                    }),
                    // No thread to be had: after the build, on this one.
                    Err(_) => self.source_info_for(options, &[]),
                };
                (built, info)
            });
            let outcome: Result<SharedBuild, _> =
                built.and_then(|(spirv, compiled, log, uniform)| {
                    Ok((Arc::new(spirv), Arc::new(compiled), log, uniform, info?))
                });
            self.builds.finish(&members, |st| match &outcome {
                Ok((spirv, compiled, log, uniform, info)) => {
                    st.status = CL_BUILD_SUCCESS;
                    st.log = log.clone();
                    st.binary_type = CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
                    st.spirv = Some(Arc::clone(spirv));
                    st.compiled = Some(Arc::clone(compiled));
                    st.uniform_work_groups = *uniform;
                    st.source_info = info.clone();
                }
                Err((_, log)) => {
                    st.status = CL_BUILD_ERROR;
                    st.log = log.clone();
                    st.compiled = None;
                    st.source_info = None;
                }
            });
            if let Err((code, _)) = outcome {
                result = result.and(Err(code));
            }
        }
        result
    }

    /// What an OpenCL C program built or compiled with `options` declares beyond
    /// SPIR-V: None unless it asks for argument information or uses
    /// `vec_type_hint` (whose signedness SPIR-V loses), so other builds run clang
    /// once.
    fn source_info_for(
        &self,
        options: &str,
        headers: &[(&str, &str)],
    ) -> Result<Option<Arc<SourceInfoTable>>, (cl_int, String)> {
        let ProgramSource::Source(src) = &self.source else {
            return Ok(None);
        };
        let Ok(opts) = BuildOptions::parse(options) else {
            return Ok(None);
        };
        let hints = src.contains("vec_type_hint")
            || headers.iter().any(|(_, h)| h.contains("vec_type_hint"));
        if !opts.kernel_arg_info && !hints {
            return Ok(None);
        }
        match build::kernel_source_info(src, &opts, headers) {
            Ok(mut t) => {
                if !opts.kernel_arg_info {
                    for k in t.values_mut() {
                        k.args = None;
                    }
                }
                Ok(Some(Arc::new(t)))
            }
            Err(SourceBuildError::ClangNotFound(reason)) => Err((
                CL_COMPILER_NOT_AVAILABLE,
                format!("cranecl: no OpenCL C compiler available: {reason}\n"),
            )),
            Err(SourceBuildError::Failed(diag)) => Err((CL_BUILD_PROGRAM_FAILURE, diag)),
        }
    }

    fn run_build(&self, options: &str, loaded: Option<&LoadedBinary>) -> BuildOutcome {
        if matches!(self.source, ProgramSource::Linked) {
            return Err((
                CL_INVALID_OPERATION,
                "a linked program cannot be built again\n".into(),
            ));
        }
        let effective = match (loaded, options.trim().is_empty()) {
            (Some(l), true) => l.options.as_str(),
            _ => options,
        };
        let opts = BuildOptions::parse(effective).map_err(|msg| {
            (
                CL_INVALID_BUILD_OPTIONS,
                format!("invalid build options: {msg}\n"),
            )
        })?;
        // A binary keeps the uniformity it was built with unless the options name an
        // OpenCL C version that allows ragged work-groups (pyopencl rebuilds its cached
        // binaries with its `-I` option).
        let uniform =
            requires_uniform_work_groups(&opts, matches!(self.source, ProgramSource::Source(_)))
                || (loaded.is_some_and(|l| l.uniform_work_groups)
                    && (opts.cl_std.is_none() || !opts.non_uniform_work_groups()));
        let mut log = String::new();
        let words = match (&self.source, loaded) {
            (ProgramSource::Source(src), _) => match build::compile_source(src, &opts) {
                Ok(out) => {
                    log.push_str(&out.log);
                    out.spirv
                }
                Err(SourceBuildError::ClangNotFound(reason)) => {
                    return Err((
                        CL_COMPILER_NOT_AVAILABLE,
                        format!("cranecl: no OpenCL C compiler available: {reason}\n"),
                    ));
                }
                Err(SourceBuildError::Failed(diag)) => {
                    return Err((CL_BUILD_PROGRAM_FAILURE, diag))
                }
            },
            (ProgramSource::Il(words), _) => {
                let values = self.spec_values.lock().clone();
                if values.is_empty() {
                    words.clone()
                } else {
                    cranecl_jit::spirv::specialize(words, &values)
                        .map_err(|e| (CL_BUILD_PROGRAM_FAILURE, format!("{}\n", e.message)))?
                }
            }
            (_, Some(l)) => l.spirv.as_ref().clone(),
            _ => Vec::new(),
        };
        let jit_opts = CompileOptions {
            uniform_work_groups: uniform,
            ..opts.jit.clone()
        };
        match build::compile_spirv(&words, &jit_opts) {
            Ok(compiled) => Ok((words, compiled, log, uniform)),
            Err(e) => {
                log.push_str(&e.message);
                if !log.ends_with('\n') {
                    log.push('\n');
                }
                let code = if e.kind == cranecl_jit::CompileErrorKind::OutOfResources {
                    CL_OUT_OF_RESOURCES
                } else {
                    CL_BUILD_PROGRAM_FAILURE
                };
                Err((code, log))
            }
        }
    }

    /// `CL_PROGRAM_BINARIES`: per device, our binary of what was built, compiled or
    /// linked for it (empty if nothing was).
    pub fn binaries(&self) -> Vec<Vec<u8>> {
        self.builds
            .all()
            .iter()
            .enumerate()
            .map(
                |(i, st)| match (st.status, self.builds.loaded(i), &st.spirv) {
                    // Not built since it was loaded: the binary it was created from.
                    (CL_BUILD_NONE, Some(l), _) => {
                        encode_binary(&l.spirv, &l.options, l.binary_type, l.uniform_work_groups)
                    }
                    (_, _, Some(spirv)) => {
                        encode_binary(spirv, &st.options, st.binary_type, st.uniform_work_groups)
                    }
                    _ => Vec::new(),
                },
            )
            .collect()
    }

    /// `clCompileProgram` for `devices` (as for [`Program::build`]): OpenCL C source
    /// (with embedded `headers`, as `(include name, header source)`) to a compiled
    /// object; a program from SPIR-V (clCreateProgramWithIL) becomes a compiled object
    /// of its module once the jit has checked it.
    pub fn compile(
        &self,
        devices: Option<&[Arc<Device>]>,
        options: &str,
        headers: &[(String, String)],
    ) -> CLResult<()> {
        if !matches!(self.source, ProgramSource::Source(_) | ProgramSource::Il(_)) {
            return Err(CL_INVALID_OPERATION);
        }
        self.check_devices(devices)?;
        if self.attached_kernels() > 0 {
            return Err(CL_INVALID_OPERATION);
        }
        let targets = self.builds.targets(devices);
        self.builds.begin(&targets, options)?;
        let result = (|| {
            let opts = BuildOptions::parse(options).map_err(|msg| {
                (
                    CL_INVALID_COMPILER_OPTIONS,
                    format!("invalid compiler options: {msg}\n"),
                )
            })?;
            let src = match &self.source {
                ProgramSource::Source(src) => src,
                ProgramSource::Il(words) => {
                    // Specialization constants set so far apply to this compile.
                    let values = self.spec_values.lock().clone();
                    let failed = |e: cranecl_jit::CompileError| {
                        (CL_COMPILE_PROGRAM_FAILURE, format!("{}\n", e.message))
                    };
                    let words = if values.is_empty() {
                        words.clone()
                    } else {
                        cranecl_jit::spirv::specialize(words, &values).map_err(failed)?
                    };
                    cranecl_jit::validate(&words).map_err(failed)?;
                    return Ok((words, String::new(), opts.uniform_work_group_size, None));
                }
                _ => return Err((CL_INVALID_OPERATION, String::new())),
            };
            let refs: Vec<(&str, &str)> = headers
                .iter()
                .map(|(n, s)| (n.as_str(), s.as_str()))
                .collect();
            match build::compile_source_with_headers(src, &opts, &refs) {
                Ok(out) => {
                    let info = self
                        .source_info_for(options, &refs)
                        .map_err(|(_, log)| (CL_COMPILE_PROGRAM_FAILURE, log))?;
                    Ok((out.spirv, out.log, !opts.non_uniform_work_groups(), info))
                }
                Err(SourceBuildError::ClangNotFound(reason)) => Err((
                    CL_COMPILER_NOT_AVAILABLE,
                    format!("cranecl: no OpenCL C compiler available: {reason}\n"),
                )),
                Err(SourceBuildError::Failed(diag)) => Err((CL_COMPILE_PROGRAM_FAILURE, diag)),
            }
        })();
        let spirv = result
            .as_ref()
            .ok()
            .map(|(spirv, _, _, _)| Arc::new(spirv.clone()));
        self.builds.finish(&targets, |st| {
            st.compiled = None;
            match &result {
                Ok((_, log, uniform, info)) => {
                    st.status = CL_BUILD_SUCCESS;
                    st.log = log.clone();
                    st.binary_type = CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT;
                    st.spirv = spirv.clone();
                    st.uniform_work_groups = *uniform;
                    st.source_info = info.clone();
                }
                Err((_, log)) => {
                    st.status = CL_BUILD_ERROR;
                    st.log = log.clone();
                    st.source_info = None;
                }
            }
        });
        result.map(|_| ()).map_err(|(code, _)| code)
    }

    /// The compiled object or library of this program that a link for `device` uses:
    /// the one built for `device` or for the device it was partitioned from.
    fn linkable_for(&self, device: &Device) -> Option<BuildState> {
        let all = self.builds.all();
        let linkable = |st: &BuildState| {
            st.status == CL_BUILD_SUCCESS
                && st.spirv.is_some()
                && matches!(
                    st.binary_type,
                    CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT | CL_PROGRAM_BINARY_TYPE_LIBRARY
                )
        };
        let loaded_linkable = |i: usize| {
            self.builds.loaded(i).is_some_and(|l| {
                matches!(
                    l.binary_type,
                    CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT | CL_PROGRAM_BINARY_TYPE_LIBRARY
                )
            })
        };
        // The device itself first, then its ancestors.
        let mut candidates: Vec<usize> = (0..all.len())
            .filter(|&i| device.is_within(&self.devices()[i]))
            .collect();
        candidates.sort_by_key(|&i| !std::ptr::eq(&*self.devices()[i], device));
        candidates.into_iter().find_map(|i| {
            let st = &all[i];
            if linkable(st) || (st.status == CL_BUILD_NONE && loaded_linkable(i)) {
                Some(st.clone())
            } else {
                None
            }
        })
    }

    /// `clLinkProgram`: links compiled objects and libraries into a library or an
    /// executable for `devices` (the context's when `None`). The new program comes back
    /// even when linking fails (its build log says why), together with the link's
    /// result. Each device is linked if every input has a compiled object or library
    /// for it, left without an executable if none has (`CL_INVALID_OPERATION` if
    /// only some have, or if no device is linked).
    pub fn link(
        context: Arc<Context>,
        devices: Option<Vec<Arc<Device>>>,
        inputs: &[Arc<Program>],
        options: &str,
    ) -> CLResult<(Arc<Program>, CLResult<()>)> {
        let opts = LinkOptions::parse(options).map_err(|_| CL_INVALID_LINKER_OPTIONS)?;
        let devices = devices.unwrap_or_else(|| context.devices.clone());
        // Per device, the object or library of each input it links; devices with the
        // same inputs share one link. A device for which no input has one gets no
        // executable; one for which only some have one is CL_INVALID_OPERATION, as is
        // a link that applies to no device.
        let mut groups: Vec<(Vec<BuildState>, Vec<usize>)> = Vec::new();
        for (i, d) in devices.iter().enumerate() {
            let found: Vec<Option<BuildState>> = inputs.iter().map(|p| p.linkable_for(d)).collect();
            if found.iter().all(Option::is_none) {
                continue;
            }
            let objects = found
                .into_iter()
                .collect::<Option<Vec<BuildState>>>()
                .ok_or(CL_INVALID_OPERATION)?;
            let same = |g: &[BuildState]| {
                g.iter()
                    .zip(&objects)
                    .all(|(a, b)| match (&a.spirv, &b.spirv) {
                        (Some(x), Some(y)) => Arc::ptr_eq(x, y),
                        _ => false,
                    })
            };
            match groups.iter_mut().find(|(g, _)| same(g)) {
                Some((_, members)) => members.push(i),
                None => groups.push((objects, vec![i])),
            }
        }
        if groups.is_empty() {
            return Err(CL_INVALID_OPERATION);
        }
        let loaded = vec![None; devices.len()];
        let program = Self::with_devices(context, ProgramSource::Linked, devices, loaded);
        let mut status = Ok(());
        for (objects, members) in groups {
            let uniform = objects.iter().any(|st| st.uniform_work_groups);
            // The kernels of inputs compiled with -cl-kernel-arg-info keep their info.
            let mut info: Option<SourceInfoTable> = None;
            for t in objects.iter().filter_map(|st| st.source_info.as_ref()) {
                info.get_or_insert_with(Default::default)
                    .extend(t.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            let info = info.map(Arc::new);
            let result = (|| -> Result<(Vec<u32>, Option<CompiledProgram>), String> {
                let words: Vec<&[u32]> = objects
                    .iter()
                    .filter_map(|st| st.spirv.as_ref().map(|m| m.as_slice()))
                    .collect();
                let linked = build::link_spirv(&words, opts.create_library)?;
                if opts.create_library {
                    return Ok((linked, None));
                }
                let jit_opts = CompileOptions {
                    uniform_work_groups: uniform,
                    ..opts.jit.clone()
                };
                let compiled = build::compile_spirv(&linked, &jit_opts).map_err(|e| e.message)?;
                Ok((linked, Some(compiled)))
            })();
            let result = result.map(|(spirv, compiled)| (Arc::new(spirv), compiled.map(Arc::new)));
            program.builds.finish(&members, |st| {
                st.options = options.to_string();
                st.uniform_work_groups = uniform;
                st.source_info = info.clone();
                match &result {
                    Ok((spirv, compiled)) => {
                        st.status = CL_BUILD_SUCCESS;
                        st.binary_type = if compiled.is_some() {
                            CL_PROGRAM_BINARY_TYPE_EXECUTABLE
                        } else {
                            CL_PROGRAM_BINARY_TYPE_LIBRARY
                        };
                        st.spirv = Some(Arc::clone(spirv));
                        st.compiled = compiled.clone();
                    }
                    Err(log) => {
                        st.status = CL_BUILD_ERROR;
                        st.log = if log.ends_with('\n') {
                            log.clone()
                        } else {
                            format!("{log}\n")
                        };
                    }
                }
            });
            if result.is_err() {
                status = Err(CL_LINK_PROGRAM_FAILURE);
            }
        }
        Ok((program, status))
    }

    /// `CL_PROGRAM_KERNEL_NAMES` in module order (of the first device's executable).
    pub fn kernel_names(&self) -> Option<Vec<String>> {
        self.compiled().map(|c| {
            c.kernels
                .iter()
                .map(|k| k.info.name.clone())
                .filter(|n| !cranecl_jit::device_enqueue::is_hidden_kernel(n))
                .collect()
        })
    }
}

/// OpenCL C 1.x builds (no `-cl-std`, or CL1.x) need uniform work-groups, as does
/// `-cl-uniform-work-group-size`; CL2.0/3.0 builds and SPIR-V allow non-uniform ones.
fn requires_uniform_work_groups(opts: &BuildOptions, from_source: bool) -> bool {
    if from_source {
        !opts.non_uniform_work_groups()
    } else {
        opts.uniform_work_group_size
    }
}

/// Serializes a program binary (`uniform`: built for uniform work-groups).
pub fn encode_binary(
    spirv: &[u32],
    options: &str,
    binary_type: cl_program_binary_type,
    uniform: bool,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(20 + options.len() + spirv.len() * 4);
    out.extend_from_slice(BINARY_MAGIC);
    let flags = if uniform {
        BINARY_UNIFORM_WORK_GROUPS
    } else {
        0
    };
    out.extend_from_slice(&(binary_type | flags).to_le_bytes());
    out.extend_from_slice(&u32::try_from(options.len()).unwrap_or(0).to_le_bytes());
    out.extend_from_slice(&u32::try_from(spirv.len()).unwrap_or(0).to_le_bytes());
    if u32::try_from(options.len()).is_ok() {
        out.extend_from_slice(options.as_bytes());
    }
    for w in spirv {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out
}

/// Parses a program binary (`CL_INVALID_BINARY` if it is not ours or is damaged).
pub fn decode_binary(bytes: &[u8]) -> CLResult<LoadedBinary> {
    let rest = bytes
        .strip_prefix(BINARY_MAGIC.as_slice())
        .ok_or(CL_INVALID_BINARY)?;
    let ty = rest.get(..4).ok_or(CL_INVALID_BINARY)?;
    let word0 = u32::from_le_bytes([ty[0], ty[1], ty[2], ty[3]]);
    let uniform_work_groups = word0 & BINARY_UNIFORM_WORK_GROUPS != 0;
    let binary_type = (word0 & !BINARY_UNIFORM_WORK_GROUPS) as cl_program_binary_type;
    if !matches!(
        binary_type,
        CL_PROGRAM_BINARY_TYPE_EXECUTABLE
            | CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
            | CL_PROGRAM_BINARY_TYPE_LIBRARY
    ) {
        return Err(CL_INVALID_BINARY);
    }
    let rest = &rest[4..];
    let word = |b: &[u8], at: usize| -> CLResult<usize> {
        let s = b.get(at..at + 4).ok_or(CL_INVALID_BINARY)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize)
    };
    let opt_len = word(rest, 0)?;
    let n_words = word(rest, 4)?;
    let body = &rest[8..];
    let opts = body.get(..opt_len).ok_or(CL_INVALID_BINARY)?;
    let options = std::str::from_utf8(opts)
        .map_err(|_| CL_INVALID_BINARY)?
        .to_string();
    let code = &body[opt_len..];
    if n_words.checked_mul(4) != Some(code.len()) || n_words < 5 {
        return Err(CL_INVALID_BINARY);
    }
    let spirv: Vec<u32> = code
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if spirv[0] != 0x0723_0203 {
        return Err(CL_INVALID_BINARY);
    }
    Ok(LoadedBinary {
        spirv: Arc::new(spirv),
        options,
        binary_type,
        uniform_work_groups,
    })
}

/// SPIR-V bytes as words, in either byte order (clCreateProgramWithIL);
/// `CL_INVALID_VALUE` if it cannot be SPIR-V.
pub fn il_words(bytes: &[u8]) -> CLResult<Vec<u32>> {
    if !bytes.len().is_multiple_of(4) || bytes.len() < 20 {
        return Err(CL_INVALID_VALUE);
    }
    let le: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    match le[0] {
        0x0723_0203 => Ok(le),
        0x0302_2307 => Ok(le.into_iter().map(u32::swap_bytes).collect()),
        _ => Err(CL_INVALID_VALUE),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_round_trip() {
        let spirv = vec![0x0723_0203, 0x0001_0000, 0, 10, 0, 42];
        for uniform in [false, true] {
            let bin = encode_binary(
                &spirv,
                "-cl-mad-enable",
                CL_PROGRAM_BINARY_TYPE_LIBRARY,
                uniform,
            );
            let l = decode_binary(&bin).expect("decodes");
            assert_eq!(*l.spirv, spirv);
            assert_eq!(l.options, "-cl-mad-enable");
            assert_eq!(l.binary_type, CL_PROGRAM_BINARY_TYPE_LIBRARY);
            assert_eq!(l.uniform_work_groups, uniform);
        }
        let bin = encode_binary(&spirv, "", CL_PROGRAM_BINARY_TYPE_LIBRARY, false);
        assert_eq!(decode_binary(&bin[..bin.len() - 1]), Err(CL_INVALID_BINARY));
        assert_eq!(decode_binary(b"garbage!garbage!"), Err(CL_INVALID_BINARY));
    }

    #[test]
    fn il_byte_orders() {
        let words = [0x0723_0203u32, 0x0001_0000, 0, 10, 0];
        let le: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let be: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
        assert_eq!(il_words(&le), Ok(words.to_vec()));
        assert_eq!(il_words(&be), Ok(words.to_vec()));
        assert_eq!(il_words(&le[..18]), Err(CL_INVALID_VALUE));
    }

    #[test]
    fn uniformity_rules() {
        let parse = |o: &str| BuildOptions::parse(o).expect("options");
        assert!(requires_uniform_work_groups(&parse("-cl-std=CL1.2"), true));
        assert!(!requires_uniform_work_groups(&parse(""), false));
        assert!(!requires_uniform_work_groups(&parse("-cl-std=CL3.0"), true));
        assert!(requires_uniform_work_groups(
            &parse("-cl-std=CL3.0 -cl-uniform-work-group-size"),
            true
        ));
        assert!(requires_uniform_work_groups(
            &parse("-cl-uniform-work-group-size"),
            false
        ));
    }
}
