//! Program-scope storage: `__constant` data and program-scope `global` variables
//! (OpenCL C 2.0+: with initializers, `static` variables in functions, pointers to
//! other variables). One zeroed block per compiled program, each variable at its
//! natural alignment (at least 16 bytes), initializers written before any kernel runs.
//! Kernels address the variables directly; the values live as long as the compiled
//! program, so they persist from one launch to the next.

use std::collections::HashMap;
use std::ptr::NonNull;

use crate::options::MAX_GLOBAL_VARIABLE_SIZE;
use crate::spirv::{Id, Module, Storage};
use crate::{meta, CompileError};

/// The alignment of the block (the largest OpenCL type, `long16`/`double16`).
const BLOCK_ALIGN: usize = 128;

/// One aligned piece of the block.
#[repr(C, align(128))]
#[derive(Clone, Copy)]
struct Chunk([u8; BLOCK_ALIGN]);

/// The storage of a program's module-scope variables.
pub struct ProgramData {
    /// The block, owned as a raw allocation: kernels write it through raw pointers
    /// while this struct lives, so no Rust reference to it is kept.
    block: Option<NonNull<[Chunk]>>,
    /// Absolute address of each variable.
    pub addrs: HashMap<Id, u64>,
    /// Bytes of writable program-scope variables (`CrossWorkgroup` storage):
    /// `CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE`.
    pub global_variable_bytes: usize,
    /// NUL-terminated strings kernels pass by address (the names of device-enqueue
    /// invoke kernels, see [`ProgramData::add_name`]).
    names: Vec<std::ffi::CString>,
}

// SAFETY: the block is plain memory owned by this struct; Rust code never reads or
// writes it after `lay_out` returns (kernels use it through the raw addresses, with
// the memory-model rules of OpenCL), and it is freed only on drop.
unsafe impl Send for ProgramData {}
// SAFETY: as above; `&ProgramData` gives access to nothing but the address map.
unsafe impl Sync for ProgramData {}

impl Drop for ProgramData {
    fn drop(&mut self) {
        if let Some(block) = self.block.take() {
            // SAFETY: `block` came from `Box::into_raw` in `lay_out` and is freed once;
            // the owner of this data outlives every kernel that uses it.
            drop(unsafe { Box::from_raw(block.as_ptr()) });
        }
    }
}

/// Lays out, allocates and initialises every `__constant` and `global` module-scope
/// variable of `m`.
pub fn lay_out(m: &Module) -> Result<ProgramData, CompileError> {
    let mut offsets = Vec::new();
    let mut total = 0usize;
    let mut global_variable_bytes = 0usize;
    for id in &m.global_order {
        let g = &m.globals[id];
        // (Built-ins have no storage, also when declared UniformConstant.)
        if g.builtin.is_some()
            || !matches!(
                g.storage,
                Storage::UniformConstant | Storage::CrossWorkgroup
            )
        {
            continue;
        }
        let (_, pointee) = m.pointee(g.ty)?;
        let l = m.layout(pointee)?;
        let size = usize::try_from(l.size).map_err(|_| too_big())?;
        let align = usize::try_from(l.align.max(16)).map_err(|_| too_big())?;
        let off = total.checked_next_multiple_of(align).ok_or_else(too_big)?;
        total = off.checked_add(size.max(1)).ok_or_else(too_big)?;
        if g.storage == Storage::CrossWorkgroup {
            if size > MAX_GLOBAL_VARIABLE_SIZE {
                return Err(CompileError::unsupported(format!(
                    "program-scope variable {} has {size} bytes; at most {MAX_GLOBAL_VARIABLE_SIZE} are supported",
                    g.name
                )));
            }
            global_variable_bytes = global_variable_bytes.saturating_add(size);
        }
        offsets.push((*id, off, pointee));
    }
    if offsets.is_empty() {
        return Ok(ProgramData {
            block: None,
            addrs: HashMap::new(),
            global_variable_bytes: 0,
            names: Vec::new(),
        });
    }
    let chunks = total.div_ceil(BLOCK_ALIGN);
    let mut boxed = vec![Chunk([0; BLOCK_ALIGN]); chunks].into_boxed_slice();
    let base = boxed.as_ptr() as u64;
    let addrs: HashMap<Id, u64> = offsets
        .iter()
        .map(|(id, off, _)| (*id, base + *off as u64))
        .collect();
    // Initializers may hold the addresses of other variables: all addresses first.
    let mut bytes = vec![0u8; chunks * BLOCK_ALIGN];
    let address_of = |v: Id| addrs.get(&v).copied();
    for (id, off, pointee) in &offsets {
        if let Some(init) = m.globals[id].init {
            meta::constant_bytes(m, init, *pointee, &mut bytes, *off, &address_of)?;
        }
    }
    for (chunk, src) in boxed.iter_mut().zip(bytes.chunks_exact(BLOCK_ALIGN)) {
        chunk.0.copy_from_slice(src);
    }
    Ok(ProgramData {
        block: NonNull::new(Box::into_raw(boxed)),
        addrs,
        global_variable_bytes,
        names: Vec::new(),
    })
}

impl ProgramData {
    /// Keeps `name` as a NUL-terminated string for the program's lifetime and maps
    /// `id` (an `OpFunction`: a device-enqueue invoke) to its address in [`Self::addrs`].
    pub fn add_name(&mut self, id: Id, name: &str) -> Result<(), CompileError> {
        let c = std::ffi::CString::new(name)
            .map_err(|_| CompileError::malformed(format!("kernel name {name:?} has a NUL")))?;
        // The CString's heap buffer does not move when the vector grows.
        self.addrs.insert(id, c.as_ptr() as u64);
        self.names.push(c);
        Ok(())
    }
}

fn too_big() -> CompileError {
    CompileError::unsupported("program-scope variables larger than the address space")
}
