//! The linker behind clLinkProgram: merges SPIR-V modules into one, in process.
//!
//! Each input's ids are renumbered into one id space; identical types and constants
//! are shared; an `Import` is resolved to the `Export` (or `LinkOnceODR`) definition
//! of the same name, and the import's declaration disappears. Unresolved imports stay
//! (built-in functions and variables are imports that the jit resolves by name).
//! A library (`-create-library`) keeps its exports for later links; an executable
//! drops them.
//!
//! What clang-22 needs beyond a textbook linker: a declaration of a function whose
//! pointer parameters clang could not type (`extern` kernels, prototypes) has
//! `uchar*` where the definition has `float*`, so calls get `OpBitcast`s of such
//! pointer arguments (`fixup`). The same OpenCL C `inline` function included from one
//! header into several programs is defined in each: definitions that are
//! instruction-for-instruction identical are folded into one; different definitions
//! of one name are an error.
//!
//! Parts: `symbols` (linkage attributes and who defines what), `merge` (renumbering,
//! sharing types and constants, emitting the sections), `fixup` (folding duplicate
//! definitions, pointer casts at calls and variable uses, entry-point interfaces), `order` (types, constants
//! and globals in an order where every id is defined before use). This module does
//! not validate what it links: the jit does that when the executable is compiled.

mod fixup;
mod merge;
mod order;
mod symbols;

use rspirv::binary::Assemble;
use rspirv::dr;
use rspirv::spirv::Word;

use crate::{CompileError, CompileErrorKind};

/// What clLinkProgram produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkOutput {
    /// An executable: exports are dropped (the module is complete but for built-ins).
    Executable,
    /// A library (`-create-library`): exports stay, for linking again.
    Library,
}

/// A `Link` error (conflicting or mismatched symbols).
fn link_error(message: impl Into<String>) -> CompileError {
    CompileError {
        kind: CompileErrorKind::Link,
        message: message.into(),
    }
}

/// A copy of `inst` with every id (result, result type, operands) passed through `f`.
fn remap_ids(inst: &dr::Instruction, mut f: impl FnMut(Word) -> Word) -> dr::Instruction {
    let mut out = inst.clone();
    out.result_type = out.result_type.map(&mut f);
    out.result_id = out.result_id.map(&mut f);
    for op in &mut out.operands {
        if let Some(id) = op.id_ref_any_mut() {
            *id = f(*id);
        }
    }
    out
}

/// The next unused id (`next` saturates: a link that runs out of ids fails in the jit
/// rather than wrapping around).
fn fresh(next: &mut Word) -> Word {
    let id = *next;
    *next = next.saturating_add(1);
    id
}

/// Links `modules` (SPIR-V words, in the order clLinkProgram got the programs) into
/// one module. Errors name the symbol or the input (`input N`, counted from 0).
pub fn link(modules: &[&[u32]], output: LinkOutput) -> Result<Vec<u32>, CompileError> {
    if modules.is_empty() {
        return Err(link_error("nothing to link: no input programs"));
    }
    let inputs = modules
        .iter()
        .enumerate()
        .map(|(i, words)| {
            super::decode::load(words).map_err(|mut e| {
                e.message = format!("input {i}: {}", e.message);
                e
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let table = symbols::SymbolTable::new(&inputs)?;
    let mut merged = merge::merge(&inputs, &table, output)?;
    fixup::fold_duplicate_definitions(&mut merged)?;
    fixup::resolve_variable_imports(&mut merged)?;
    fixup::cast_call_arguments(&mut merged)?;
    fixup::complete_interfaces(&mut merged.module);
    order::sort_globals(&mut merged.module);
    if let Some(header) = merged.module.header.as_mut() {
        header.bound = merged.next_id;
    }
    Ok(merged.module.assemble())
}

#[cfg(test)]
mod tests;
