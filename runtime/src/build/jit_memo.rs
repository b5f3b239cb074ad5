//! A memo of recently jit-compiled modules, so rebuilding a program from the same
//! SPIR-V with the same options (after the clang memo, an identical rebuild) reuses
//! the native code instead of compiling it again.
//!
//! Compiled kernels are immutable and shared through `Arc`; the one thing two
//! programs must not share is mutable program-scope storage, so a module with a
//! module-scope `CrossWorkgroup` variable (a writable `global` variable) is never
//! memoised. Bounded by entry count; the oldest entries go first.
//!
//! A module with several kernels is compiled one kernel per part, the parts in
//! parallel on the worker pool ([`super::split`]).

use std::collections::VecDeque;
use std::sync::Arc;

use crate::sync::Mutex;
use cranecl_jit::{CompileError, CompileOptions, CompiledKernel, CompiledProgram};

use super::pch::Fnv;
use super::split;
use crate::exec;

/// Modules kept at most (their code stays mapped while memoised).
const MAX_ENTRIES: usize = 32;

static MEMO: Mutex<VecDeque<(u64, Vec<Arc<CompiledKernel>>)>> = Mutex::new(VecDeque::new());

/// Before `fork()`: holds the memo's lock (see `crate::fork`).
pub(crate) fn hold_for_fork(held: &mut Vec<Box<dyn std::any::Any>>) {
    held.push(Box::new(MEMO.lock()));
}

const OP_FUNCTION: u32 = 54;
const OP_VARIABLE: u32 = 59;
const STORAGE_CROSS_WORKGROUP: u32 = 5;

/// Whether `words` declare a module-scope `CrossWorkgroup` variable (writable
/// program-scope storage that each program must own). Malformed modules count as
/// having one (they are then simply not memoised).
fn has_global_storage(words: &[u32]) -> bool {
    let mut i = 5;
    while i < words.len() {
        let count = (words[i] >> 16) as usize;
        let opcode = words[i] & 0xffff;
        if count == 0 || i + count > words.len() {
            return true;
        }
        match opcode {
            OP_FUNCTION => return false,
            OP_VARIABLE if count >= 4 && words[i + 3] == STORAGE_CROSS_WORKGROUP => return true,
            _ => {}
        }
        i += count;
    }
    false
}

/// Whether `words` have an instruction taking a device-enqueue `Invoke` function
/// (`OpEnqueueKernel`, `OpGetKernel*`): the jit compiles an invoke that is not an
/// entry point as a hidden kernel of the same program, so such a module is compiled
/// whole rather than one part per entry point.
fn has_enqueue_invokes(words: &[u32]) -> bool {
    let mut i = 5;
    while i < words.len() {
        let count = (words[i] >> 16) as usize;
        if count == 0 {
            return false;
        }
        if matches!(words[i] & 0xffff, 292..=296 | 325 | 326) {
            return true;
        }
        i += count;
    }
    false
}

/// Forgets every memoised module (clUnloadPlatformCompiler); kernels still in use
/// keep their code alive through their own `Arc`s.
pub fn clear() {
    MEMO.lock().clear();
}

/// `cranecl_jit::compile` with a memo of recent results (see the module doc).
pub fn compile_spirv(
    words: &[u32],
    options: &CompileOptions,
) -> Result<CompiledProgram, CompileError> {
    let key = (!has_global_storage(words)).then(|| {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        Fnv::new()
            .bytes(&bytes)
            .bytes(format!("{options:?}").as_bytes())
            .finish()
    });
    if let Some(key) = key {
        let memo = MEMO.lock();
        if let Some((_, kernels)) = memo.iter().find(|(k, _)| *k == key) {
            // Memoised modules have no program-scope variables.
            return Ok(CompiledProgram {
                kernels: kernels.clone(),
                global_variable_bytes: 0,
            });
        }
    }
    let program = compile_kernels_in_parallel(words, options)?;
    if let Some(key) = key {
        let mut memo = MEMO.lock();
        if !memo.iter().any(|(k, _)| *k == key) {
            if memo.len() >= MAX_ENTRIES {
                memo.pop_front();
            }
            memo.push_back((key, program.kernels.clone()));
        }
    }
    Ok(program)
}

/// Compiles a module with several kernels as one part per kernel, the parts in
/// parallel on the pool (the jit compiles a module's kernels one after the other).
/// Modules with one kernel, with writable program-scope storage (which the kernels
/// must share) or on a one-worker pool are compiled whole. The first failing kernel's
/// error (in module order) is the result.
pub fn compile_kernels_in_parallel(
    words: &[u32],
    options: &CompileOptions,
) -> Result<CompiledProgram, CompileError> {
    let kernels = split::entry_points(words);
    if kernels.len() < 2
        || exec::num_workers() < 2
        || has_global_storage(words)
        || has_enqueue_invokes(words)
    {
        return cranecl_jit::compile(words, options);
    }
    let results: Vec<Mutex<Option<Result<CompiledProgram, CompileError>>>> =
        kernels.iter().map(|_| Mutex::new(None)).collect();
    // Largest kernels first, so the last one handed out is a small one (better
    // balance than module order).
    let sizes = split::function_sizes(words);
    let mut order: Vec<usize> = (0..kernels.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sizes.get(&kernels[i].id).copied().unwrap_or(0)));
    exec::parallel_for(kernels.len(), &|n| {
        let i = order[n];
        let part = split::only_entry_point(words, kernels[i].id);
        *results[i].lock() = Some(cranecl_jit::compile(&part, options));
    });
    let mut all = Vec::with_capacity(kernels.len());
    for slot in results {
        match slot.into_inner() {
            Some(Ok(part)) => all.extend(part.kernels),
            Some(Err(e)) => return Err(e),
            // parallel_for runs every item before it returns.
            None => unreachable!("parallel_for skipped a kernel"),
        }
    }
    Ok(CompiledProgram {
        kernels: all,
        // Modules with program-scope variables are compiled whole (above).
        global_variable_bytes: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(opcode: u32, operands: &[u32]) -> Vec<u32> {
        let mut v = vec![((operands.len() as u32 + 1) << 16) | opcode];
        v.extend_from_slice(operands);
        v
    }

    #[test]
    fn finds_module_scope_global_variables() {
        let header = vec![0x0723_0203, 0x0001_0000, 0, 100, 0];
        let mut constant_only = header.clone();
        constant_only.extend(inst(OP_VARIABLE, &[1, 2, 0])); // UniformConstant
        constant_only.extend(inst(OP_FUNCTION, &[3, 4, 0, 5]));
        constant_only.extend(inst(OP_VARIABLE, &[1, 6, STORAGE_CROSS_WORKGROUP])); // inside a function: ignored
        assert!(!has_global_storage(&constant_only));
        let mut global = header.clone();
        global.extend(inst(OP_VARIABLE, &[1, 2, STORAGE_CROSS_WORKGROUP]));
        assert!(has_global_storage(&global));
        // Truncated instruction: treated as "do not memoise".
        let mut broken = header;
        broken.push(5 << 16 | OP_VARIABLE);
        assert!(has_global_storage(&broken));
    }
}
