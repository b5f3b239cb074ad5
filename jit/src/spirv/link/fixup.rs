//! What is left after merging: folding identical duplicate definitions, resolving
//! variable imports, and pointer casts where a declaration and its definition type
//! pointers differently (clang-22 types the pointer parameters of a prototype as
//! `uchar*` when it cannot know better).

use std::collections::{HashMap, HashSet};

use rspirv::dr::{self, Operand};
use rspirv::spirv::{Op, StorageClass, Word};

use super::merge::Merged;
use super::{fresh, link_error, remap_ids};
use crate::CompileError;

/// Applies `rename` to every id in the module.
fn rename_everywhere(module: &mut dr::Module, rename: &HashMap<Word, Word>) {
    if rename.is_empty() {
        return;
    }
    for inst in module.all_inst_iter_mut() {
        *inst = remap_ids(inst, |w| rename.get(&w).copied().unwrap_or(w));
    }
}

/// Drops decorations and names of ids that no longer exist.
fn purge_annotations(module: &mut dr::Module, gone: &HashSet<Word>) {
    let targets_gone = |inst: &dr::Instruction| matches!(inst.operands.first(), Some(Operand::IdRef(id)) if gone.contains(id));
    module.annotations.retain(|i| !targets_gone(i));
    module.debug_names.retain(|i| !targets_gone(i));
}

/// The instructions of `f` with the ids it defines numbered in order of definition
/// (high bit set) and every other id kept: equal for two definitions that differ
/// only in their own ids.
fn canonical(f: &dr::Function) -> Vec<dr::Instruction> {
    let locals: HashMap<Word, Word> = f
        .all_inst_iter()
        .filter_map(|i| i.result_id)
        .enumerate()
        .map(|(n, id)| (id, 0x8000_0000 | n as Word))
        .collect();
    f.all_inst_iter()
        .map(|i| remap_ids(i, |w| locals.get(&w).copied().unwrap_or(w)))
        .collect()
}

fn find_function(module: &dr::Module, id: Word) -> Option<usize> {
    module.functions.iter().position(|f| f.def_id() == Some(id))
}

/// Folds each further `Export` of a function into the first when both definitions
/// are identical (the same `inline` function from a header in several programs);
/// two different definitions of one name are an error.
pub fn fold_duplicate_definitions(m: &mut Merged) -> Result<(), CompileError> {
    if m.duplicates.is_empty() {
        return Ok(());
    }
    if m.next_id >= 0x8000_0000 {
        return Err(link_error("too many ids to link"));
    }
    let mut rename = HashMap::new();
    let mut gone = HashSet::new();
    for dup in &m.duplicates {
        let (Some(w), Some(d)) = (
            find_function(&m.module, dup.winner),
            find_function(&m.module, dup.id),
        ) else {
            return Err(link_error(format!(
                "symbol {} is defined in more than one program",
                dup.name
            )));
        };
        // Compare with the winner's id standing for the duplicate's.
        let winner = canonical(&m.module.functions[w]);
        let mut candidate = m.module.functions[d].clone();
        for inst in candidate.all_inst_iter_mut() {
            *inst = remap_ids(inst, |x| if x == dup.id { dup.winner } else { x });
        }
        if canonical(&candidate) != winner {
            return Err(link_error(format!(
                "function {} is defined differently in more than one program",
                dup.name
            )));
        }
        rename.insert(dup.id, dup.winner);
        gone.extend(
            m.module.functions[d]
                .all_inst_iter()
                .filter_map(|i| i.result_id),
        );
    }
    m.module
        .functions
        .retain(|f| f.def_id().is_none_or(|id| !rename.contains_key(&id)));
    purge_annotations(&mut m.module, &gone);
    rename_everywhere(&mut m.module, &rename);
    Ok(())
}

/// Type facts of the merged module that the casts need.
struct Types {
    /// Pointer type -> its storage class.
    pointers: HashMap<Word, StorageClass>,
    /// Value id (global, parameter or instruction result) -> its type.
    value_types: HashMap<Word, Word>,
    /// Function id -> (return type, parameter types).
    signatures: HashMap<Word, (Word, Vec<Word>)>,
    /// Function type id -> (return type, parameter types).
    function_types: HashMap<Word, (Word, Vec<Word>)>,
}

impl Types {
    fn new(module: &dr::Module) -> Types {
        let mut t = Types {
            pointers: HashMap::new(),
            value_types: HashMap::new(),
            signatures: HashMap::new(),
            function_types: HashMap::new(),
        };
        for inst in &module.types_global_values {
            let ids: Vec<Word> = inst
                .operands
                .iter()
                .filter_map(|o| o.id_ref_any())
                .collect();
            match (inst.class.opcode, inst.result_id) {
                (Op::TypePointer, Some(id)) => {
                    if let Some(Operand::StorageClass(sc)) = inst.operands.first() {
                        t.pointers.insert(id, *sc);
                    }
                }
                (Op::TypeFunction, Some(id)) if !ids.is_empty() => {
                    t.function_types.insert(id, (ids[0], ids[1..].to_vec()));
                }
                _ => {}
            }
            if let (Some(id), Some(ty)) = (inst.result_id, inst.result_type) {
                t.value_types.insert(id, ty);
            }
        }
        for f in &module.functions {
            let (Some(def), Some(id)) = (&f.def, f.def_id()) else {
                continue;
            };
            let params = f.parameters.iter().filter_map(|p| p.result_type).collect();
            t.signatures
                .insert(id, (def.result_type.unwrap_or(0), params));
            for inst in f.all_inst_iter() {
                if let (Some(id), Some(ty)) = (inst.result_id, inst.result_type) {
                    t.value_types.insert(id, ty);
                }
            }
        }
        t
    }

    /// Whether a value of type `from` may stand for `to` after an `OpBitcast`: two
    /// pointers into the same storage class.
    fn castable(&self, from: Word, to: Word) -> bool {
        from == to
            || matches!((self.pointers.get(&from), self.pointers.get(&to)), (Some(a), Some(b)) if a == b)
    }
}

fn bitcast(ty: Word, id: Word, value: Word) -> dr::Instruction {
    dr::Instruction::new(Op::Bitcast, Some(ty), Some(id), vec![Operand::IdRef(value)])
}

/// Index in a function's entry block after its leading `OpVariable`s, where
/// instructions that every use dominates can go.
fn entry_insertion_point(f: &dr::Function) -> usize {
    f.blocks.first().map_or(0, |b| {
        b.instructions
            .iter()
            .take_while(|i| matches!(i.class.opcode, Op::Variable | Op::Line | Op::NoLine))
            .count()
    })
}

/// Replaces the placeholder of each resolved variable import by the definition; if
/// the import typed the variable differently (another pointee), each function using
/// it starts with a cast of the definition to the import's type.
pub fn resolve_variable_imports(m: &mut Merged) -> Result<(), CompileError> {
    if m.variable_imports.is_empty() {
        return Ok(());
    }
    let types = Types::new(&m.module);
    let mut rename = HashMap::new();
    let imports = std::mem::take(&mut m.variable_imports);
    for import in &imports {
        let def_type = types.value_types.get(&import.definition).copied();
        let Some(def_type) = def_type.filter(|_| types.pointers.contains_key(&import.import_type))
        else {
            return Err(link_error(format!(
                "{} is imported as a variable but its definition is not one",
                import.name
            )));
        };
        if def_type == import.import_type {
            rename.insert(import.placeholder, import.definition);
            continue;
        }
        if !types.castable(def_type, import.import_type) {
            return Err(link_error(format!(
                "variable {}: its declaration and its definition have different types",
                import.name
            )));
        }
        let used_in_globals = m.module.types_global_values.iter().any(|i| {
            i.operands
                .iter()
                .any(|o| o.id_ref_any() == Some(import.placeholder))
        });
        if used_in_globals {
            return Err(link_error(format!(
                "variable {}: a global initializer uses it with a type other than its definition's",
                import.name
            )));
        }
        for fi in 0..m.module.functions.len() {
            let uses = m.module.functions[fi].all_inst_iter().any(|i| {
                i.operands
                    .iter()
                    .any(|o| o.id_ref_any() == Some(import.placeholder))
            });
            if !uses || m.module.functions[fi].blocks.is_empty() {
                continue;
            }
            let local = m.fresh_id();
            let f = &mut m.module.functions[fi];
            for inst in f.all_inst_iter_mut() {
                *inst = remap_ids(inst, |w| if w == import.placeholder { local } else { w });
            }
            let at = entry_insertion_point(f);
            f.blocks[0]
                .instructions
                .insert(at, bitcast(import.import_type, local, import.definition));
        }
        for ep in &mut m.module.entry_points {
            *ep = remap_ids(ep, |w| {
                if w == import.placeholder {
                    import.definition
                } else {
                    w
                }
            });
        }
    }
    rename_everywhere(&mut m.module, &rename);
    Ok(())
}

/// Checks each resolved function import against its definition, then casts the
/// pointer arguments (and pointer results) of calls whose types differ from the
/// callee's parameters.
pub fn cast_call_arguments(m: &mut Merged) -> Result<(), CompileError> {
    let types = Types::new(&m.module);
    for import in &m.function_imports {
        let Some(def) = types.signatures.get(&import.definition) else {
            return Err(link_error(format!(
                "{} is imported as a function but its definition is not one",
                import.name
            )));
        };
        let compatible =
            types
                .function_types
                .get(&import.import_type)
                .is_some_and(|(ret, params)| {
                    params.len() == def.1.len()
                        && types.castable(def.0, *ret)
                        && params
                            .iter()
                            .zip(&def.1)
                            .all(|(a, b)| types.castable(*a, *b))
                });
        if !compatible {
            return Err(link_error(format!(
                "function {}: its declaration and its definition have different types",
                import.name
            )));
        }
    }
    let mut next_id = m.next_id;
    for f in &mut m.module.functions {
        for block in &mut f.blocks {
            let needs_cast = block
                .instructions
                .iter()
                .any(|i| call_needs_cast(&types, i));
            if !needs_cast {
                continue;
            }
            let mut out = Vec::with_capacity(block.instructions.len() + 4);
            for mut inst in std::mem::take(&mut block.instructions) {
                if !call_needs_cast(&types, &inst) {
                    out.push(inst);
                    continue;
                }
                let callee = inst.operands[0].id_ref_any().unwrap_or(0);
                let (ret, params) = &types.signatures[&callee];
                for (arg, param) in inst.operands[1..].iter_mut().zip(params) {
                    let Operand::IdRef(value) = arg else { continue };
                    if types.value_types.get(value).is_some_and(|t| t != param) {
                        let cast = fresh(&mut next_id);
                        out.push(bitcast(*param, cast, *value));
                        *value = cast;
                    }
                }
                let mut after = None;
                if let (Some(want), Some(result)) = (inst.result_type, inst.result_id) {
                    if want != *ret {
                        let raw = fresh(&mut next_id);
                        inst.result_type = Some(*ret);
                        inst.result_id = Some(raw);
                        after = Some(bitcast(want, result, raw));
                    }
                }
                out.push(inst);
                out.extend(after);
            }
            block.instructions = out;
        }
    }
    m.next_id = next_id;
    Ok(())
}

/// Whether `inst` is a call whose argument or result types differ from the callee's
/// only in pointee types (other differences were refused when checking imports).
fn call_needs_cast(types: &Types, inst: &dr::Instruction) -> bool {
    if inst.class.opcode != Op::FunctionCall {
        return false;
    }
    let Some((ret, params)) = inst
        .operands
        .first()
        .and_then(|o| o.id_ref_any())
        .and_then(|callee| types.signatures.get(&callee))
    else {
        return false;
    };
    if inst.operands.len() != params.len() + 1 {
        return false;
    }
    let differs = |have: Word, want: Word| have != want && types.castable(have, want);
    inst.result_type.is_some_and(|t| differs(t, *ret))
        || inst.operands[1..].iter().zip(params).any(|(arg, param)| {
            arg.id_ref_any()
                .and_then(|v| types.value_types.get(&v))
                .is_some_and(|t| differs(*t, *param))
        })
}

/// Lists in each entry point's interface the global variables its kernel now reaches
/// through calls into other inputs (SPIR-V 1.4 lists every global it uses; earlier
/// versions only `Input`/`Output` ones, i.e. built-ins).
pub fn complete_interfaces(module: &mut dr::Module) {
    let all_storage = module
        .header
        .as_ref()
        .is_some_and(|h| h.version >= 0x0001_0400);
    let globals: HashSet<Word> = module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::Variable)
        .filter(|i| {
            all_storage
                || matches!(
                    i.operands.first(),
                    Some(Operand::StorageClass(
                        StorageClass::Input | StorageClass::Output
                    ))
                )
        })
        .filter_map(|i| i.result_id)
        .collect();
    // Per function: the globals it uses itself and the functions it calls.
    let mut direct: HashMap<Word, (Vec<Word>, Vec<Word>)> = HashMap::new();
    for f in &module.functions {
        let Some(id) = f.def_id() else { continue };
        let mut uses = Vec::new();
        let mut calls = Vec::new();
        for inst in f.all_inst_iter() {
            for w in inst.operands.iter().filter_map(|o| o.id_ref_any()) {
                if globals.contains(&w) {
                    uses.push(w);
                }
            }
            if inst.class.opcode == Op::FunctionCall {
                calls.extend(inst.operands.first().and_then(|o| o.id_ref_any()));
            }
        }
        direct.insert(id, (uses, calls));
    }
    for ep in &mut module.entry_points {
        let Some(root) = ep.operands.get(1).and_then(|o| o.id_ref_any()) else {
            continue;
        };
        let mut listed: HashSet<Word> = ep.operands[3..]
            .iter()
            .filter_map(|o| o.id_ref_any())
            .collect();
        let mut seen = HashSet::from([root]);
        let mut stack = vec![root];
        while let Some(f) = stack.pop() {
            let Some((uses, calls)) = direct.get(&f) else {
                continue;
            };
            for &g in uses {
                if listed.insert(g) {
                    ep.operands.push(Operand::IdRef(g));
                }
            }
            stack.extend(calls.iter().filter(|c| seen.insert(**c)));
        }
    }
}
