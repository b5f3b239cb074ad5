//! Renumbering the inputs into one id space and emitting the merged sections.
//!
//! Types, constants and `OpUndef`s that are identical (same operands after
//! renumbering, same decorations) get one id. Imports resolved to a definition are
//! not emitted: their ids become the definition's (functions) or a placeholder that
//! `fixup` replaces (variables, whose pointer types may differ). Unresolved imports
//! of the same name and type from several inputs become one declaration.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{self, Operand};
use rspirv::spirv::{Decoration, LinkageType, Op, Word};

use super::symbols::{linkage_attributes, SymbolKind, SymbolTable};
use super::{fresh, link_error, remap_ids, LinkOutput};
use crate::CompileError;

/// A variable import resolved to a definition; uses of `placeholder` must become
/// uses of `definition` (with a cast when `import_type` differs from its type).
pub struct VariableImport {
    pub name: String,
    pub placeholder: Word,
    pub definition: Word,
    pub import_type: Word,
}

/// A function import resolved to a definition, to be checked for a matching type.
pub struct FunctionImport {
    pub name: String,
    pub import_type: Word,
    pub definition: Word,
}

/// A further definition of an exported function, to be folded into the winner.
pub struct Duplicate {
    pub name: String,
    pub id: Word,
    pub winner: Word,
}

/// The merged module and what `fixup` still has to do.
pub struct Merged {
    pub module: dr::Module,
    pub next_id: Word,
    pub variable_imports: Vec<VariableImport>,
    pub function_imports: Vec<FunctionImport>,
    pub duplicates: Vec<Duplicate>,
}

impl Merged {
    /// A new id.
    pub fn fresh_id(&mut self) -> Word {
        fresh(&mut self.next_id)
    }
}

/// One input's old id -> new id, and the old ids that are not emitted (their
/// decorations and names are dropped).
#[derive(Default)]
struct IdMap {
    map: HashMap<Word, Word>,
    skip: HashSet<Word>,
}

impl IdMap {
    fn id(&mut self, old: Word, next: &mut Word) -> Word {
        *self.map.entry(old).or_insert_with(|| fresh(next))
    }

    fn remap(&mut self, inst: &dr::Instruction, next: &mut Word) -> dr::Instruction {
        remap_ids(inst, |w| self.id(w, next))
    }

    /// Marks every id a function defines as not emitted.
    fn skip_function(&mut self, f: &dr::Function) {
        self.skip
            .extend(f.all_inst_iter().filter_map(|inst| inst.result_id));
    }
}

/// Opcodes whose instructions are shared when identical.
fn is_shareable(op: Op) -> bool {
    matches!(
        op,
        Op::TypeVoid
            | Op::TypeBool
            | Op::TypeInt
            | Op::TypeFloat
            | Op::TypeVector
            | Op::TypeMatrix
            | Op::TypeImage
            | Op::TypeSampler
            | Op::TypeSampledImage
            | Op::TypeArray
            | Op::TypeRuntimeArray
            | Op::TypeStruct
            | Op::TypeOpaque
            | Op::TypePointer
            | Op::TypeFunction
            | Op::TypeEvent
            | Op::TypeDeviceEvent
            | Op::TypeReserveId
            | Op::TypeQueue
            | Op::TypePipe
            | Op::TypePipeStorage
            | Op::TypeNamedBarrier
            | Op::ConstantTrue
            | Op::ConstantFalse
            | Op::Constant
            | Op::ConstantComposite
            | Op::ConstantSampler
            | Op::ConstantNull
            | Op::Undef
    )
}

/// The id an annotation decorates (its first operand), for the forms that have one.
fn annotation_target(inst: &dr::Instruction) -> Option<Word> {
    match inst.class.opcode {
        Op::Decorate
        | Op::MemberDecorate
        | Op::DecorateId
        | Op::DecorateString
        | Op::MemberDecorateString
        | Op::Name
        | Op::MemberName => match inst.operands.first() {
            Some(Operand::IdRef(id)) => Some(*id),
            _ => None,
        },
        _ => None,
    }
}

/// A shared instruction's identity: the instruction without its result id, and its
/// decorations without their target.
type ShareKey = (dr::Instruction, Vec<dr::Instruction>);

struct Merger<'a> {
    table: &'a SymbolTable,
    output: LinkOutput,
    out: dr::Module,
    next_id: Word,
    /// Exported name -> the new id of its definition (assigned before emission).
    winner_ids: HashMap<String, Word>,
    shared: HashMap<ShareKey, Word>,
    ext_sets: HashMap<String, Word>,
    /// Unresolved imports already emitted: (name, new type id) -> new id.
    imports: HashMap<(String, Word), Word>,
    /// Kernel name -> the input that defines it.
    kernels: HashMap<String, usize>,
    seen: HashSet<dr::Instruction>,
    declarations: Vec<dr::Function>,
    definitions: Vec<dr::Function>,
    linkage: Vec<dr::Instruction>,
    variable_imports: Vec<VariableImport>,
    function_imports: Vec<FunctionImport>,
    duplicates: Vec<Duplicate>,
}

/// Merges `inputs` (already checked by [`SymbolTable::new`]) into one module.
pub fn merge(
    inputs: &[dr::Module],
    table: &SymbolTable,
    output: LinkOutput,
) -> Result<Merged, CompileError> {
    let mut merger = Merger {
        table,
        output,
        out: dr::Module::new(),
        next_id: 1,
        winner_ids: HashMap::new(),
        shared: HashMap::new(),
        ext_sets: HashMap::new(),
        imports: HashMap::new(),
        kernels: HashMap::new(),
        seen: HashSet::new(),
        declarations: Vec::new(),
        definitions: Vec::new(),
        linkage: Vec::new(),
        variable_imports: Vec::new(),
        function_imports: Vec::new(),
        duplicates: Vec::new(),
    };
    let mut names: Vec<&String> = table.winners.keys().collect();
    names.sort();
    for name in names {
        let id = fresh(&mut merger.next_id);
        merger.winner_ids.insert(name.clone(), id);
    }
    let mut header = None;
    for (index, m) in inputs.iter().enumerate() {
        merger.module(index, m)?;
        if let Some(h) = &m.header {
            let mut h = h.clone();
            if let Some(prev) = &header {
                let prev: &dr::ModuleHeader = prev;
                h.version = h.version.max(prev.version);
                h.generator = prev.generator;
            }
            header = Some(h);
        }
    }
    if merger.output == LinkOutput::Library {
        let mut winners: Vec<(&String, &super::symbols::Definition)> =
            table.winners.iter().collect();
        winners.sort_by_key(|(name, _)| name.as_str());
        for (name, def) in winners {
            merger.linkage.push(linkage_decoration(
                merger.winner_ids[name],
                name,
                def.linkage,
            ));
        }
    }
    let Merger {
        mut out,
        next_id,
        declarations,
        definitions,
        linkage,
        variable_imports,
        function_imports,
        duplicates,
        ..
    } = merger;
    out.header = header;
    out.annotations.extend(linkage);
    out.functions = declarations.into_iter().chain(definitions).collect();
    Ok(Merged {
        module: out,
        next_id,
        variable_imports,
        function_imports,
        duplicates,
    })
}

fn linkage_decoration(id: Word, name: &str, ty: LinkageType) -> dr::Instruction {
    dr::Instruction::new(
        Op::Decorate,
        None,
        None,
        vec![
            Operand::IdRef(id),
            Operand::Decoration(Decoration::LinkageAttributes),
            Operand::LiteralString(name.to_string()),
            Operand::LinkageType(ty),
        ],
    )
}

impl Merger<'_> {
    /// Emits `inst` once (exact duplicates from several inputs are dropped).
    fn push_unique(
        list: &mut Vec<dr::Instruction>,
        seen: &mut HashSet<dr::Instruction>,
        inst: dr::Instruction,
    ) {
        if seen.insert(inst.clone()) {
            list.push(inst);
        }
    }

    fn module(&mut self, index: usize, m: &dr::Module) -> Result<(), CompileError> {
        let mut ids = IdMap::default();
        self.pre_assign(index, m, &mut ids);

        for inst in m.capabilities.iter().chain(&m.extensions) {
            let list = if inst.class.opcode == Op::Capability {
                &mut self.out.capabilities
            } else {
                &mut self.out.extensions
            };
            Self::push_unique(list, &mut self.seen, inst.clone());
        }
        for inst in &m.ext_inst_imports {
            let (Some(old), Some(Operand::LiteralString(set))) =
                (inst.result_id, inst.operands.first())
            else {
                continue;
            };
            match self.ext_sets.get(set) {
                Some(&new) => {
                    ids.map.insert(old, new);
                }
                None => {
                    let new = ids.id(old, &mut self.next_id);
                    self.ext_sets.insert(set.clone(), new);
                    self.out
                        .ext_inst_imports
                        .push(ids.remap(inst, &mut self.next_id));
                }
            }
        }
        match (&self.out.memory_model, &m.memory_model) {
            (None, Some(model)) => self.out.memory_model = Some(model.clone()),
            (Some(a), Some(b)) if a.operands != b.operands => {
                return Err(link_error(format!(
                    "input {index}: its memory model {:?} differs from {:?} of the first input",
                    b.operands, a.operands
                )));
            }
            _ => {}
        }

        self.globals(index, m, &mut ids)?;
        for f in &m.functions {
            self.function(index, f, &mut ids);
        }

        for inst in &m.entry_points {
            let mut new = ids.remap(inst, &mut self.next_id);
            if let Some(Operand::LiteralString(name)) = new.operands.get(2) {
                if let Some(first) = self.kernels.insert(name.clone(), index) {
                    return Err(link_error(format!(
                        "kernel {name} is defined in more than one program (inputs {first} and {index})"
                    )));
                }
            }
            let mut interface = HashSet::new();
            let mut at = 0;
            new.operands.retain(|op| {
                at += 1;
                match op {
                    Operand::IdRef(id) if at > 3 => interface.insert(*id),
                    _ => true,
                }
            });
            self.out.entry_points.push(new);
        }
        for inst in &m.execution_modes {
            self.out
                .execution_modes
                .push(ids.remap(inst, &mut self.next_id));
        }
        for inst in &m.annotations {
            if linkage_attributes(inst).is_some() {
                continue;
            }
            if annotation_target(inst).is_some_and(|t| ids.skip.contains(&t)) {
                continue;
            }
            let new = ids.remap(inst, &mut self.next_id);
            Self::push_unique(&mut self.out.annotations, &mut self.seen, new);
        }
        for inst in &m.debug_string_source {
            let new = ids.remap(inst, &mut self.next_id);
            Self::push_unique(&mut self.out.debug_string_source, &mut self.seen, new);
        }
        for inst in &m.debug_names {
            if annotation_target(inst).is_some_and(|t| ids.skip.contains(&t)) {
                continue;
            }
            let new = ids.remap(inst, &mut self.next_id);
            Self::push_unique(&mut self.out.debug_names, &mut self.seen, new);
        }
        for inst in &m.debug_module_processed {
            Self::push_unique(
                &mut self.out.debug_module_processed,
                &mut self.seen,
                inst.clone(),
            );
        }
        Ok(())
    }

    /// Gives winning definitions their pre-assigned ids and sends resolved imports and
    /// dropped definitions to the definition.
    fn pre_assign(&mut self, index: usize, m: &dr::Module, ids: &mut IdMap) {
        let mut entries: Vec<(&Word, &(String, LinkageType))> =
            self.table.linkage[index].iter().collect();
        entries.sort_by_key(|(id, _)| **id);
        let variables: HashSet<Word> = m
            .types_global_values
            .iter()
            .filter(|i| i.class.opcode == Op::Variable)
            .filter_map(|i| i.result_id)
            .collect();
        for (&old, (name, ty)) in entries {
            let Some(&winner) = self.winner_ids.get(name) else {
                continue;
            };
            let def = self.table.winners[name];
            let is_winner = def.module == index && def.id == old;
            if is_winner || self.table.dropped.contains_key(&(index, old)) {
                ids.map.insert(old, winner);
                if !is_winner {
                    ids.skip.insert(old);
                }
            } else if *ty == LinkageType::Import {
                ids.skip.insert(old);
                if variables.contains(&old) && def.kind == SymbolKind::Variable {
                    // The placeholder's uses are rewritten once all types are known.
                    let placeholder = fresh(&mut self.next_id);
                    ids.map.insert(old, placeholder);
                } else {
                    ids.map.insert(old, winner);
                }
            }
        }
    }

    fn globals(
        &mut self,
        index: usize,
        m: &dr::Module,
        ids: &mut IdMap,
    ) -> Result<(), CompileError> {
        let mut decorations: HashMap<Word, Vec<&dr::Instruction>> = HashMap::new();
        for inst in &m.annotations {
            if linkage_attributes(inst).is_some() {
                continue;
            }
            if let Some(target) = annotation_target(inst) {
                decorations.entry(target).or_default().push(inst);
            }
        }
        let mut forward = HashSet::new();
        for inst in &m.types_global_values {
            let op = inst.class.opcode;
            if op == Op::TypeForwardPointer {
                if let Some(Operand::IdRef(ptr)) = inst.operands.first() {
                    forward.insert(*ptr);
                }
                let new = ids.remap(inst, &mut self.next_id);
                self.out.types_global_values.push(new);
                continue;
            }
            let Some(old) = inst.result_id else {
                let new = ids.remap(inst, &mut self.next_id);
                self.out.types_global_values.push(new);
                continue;
            };
            if op == Op::Variable {
                self.variable(index, inst, ids)?;
                continue;
            }
            if is_shareable(op) && !forward.contains(&old) && !ids.map.contains_key(&old) {
                let mut body = inst.clone();
                body.result_id = None;
                let body = ids.remap(&body, &mut self.next_id);
                let mut decos: Vec<dr::Instruction> = decorations
                    .get(&old)
                    .into_iter()
                    .flatten()
                    .filter(|d| !matches!(d.class.opcode, Op::Name | Op::MemberName))
                    .map(|d| {
                        let mut d = ids.remap(d, &mut self.next_id);
                        d.operands.remove(0);
                        d
                    })
                    .collect();
                decos.sort_by_key(|d| format!("{d:?}"));
                let key = (body, decos);
                if let Some(&existing) = self.shared.get(&key) {
                    ids.map.insert(old, existing);
                    ids.skip.insert(old);
                    continue;
                }
                let new = ids.id(old, &mut self.next_id);
                self.shared.insert(key, new);
            }
            let new = ids.remap(inst, &mut self.next_id);
            self.out.types_global_values.push(new);
        }
        Ok(())
    }

    fn variable(
        &mut self,
        index: usize,
        inst: &dr::Instruction,
        ids: &mut IdMap,
    ) -> Result<(), CompileError> {
        let Some(old) = inst.result_id else {
            return Ok(());
        };
        match self.table.linkage_of(index, old) {
            Some((name, LinkageType::Import)) => {
                let ty = ids.id(inst.result_type.unwrap_or(0), &mut self.next_id);
                if let Some(&definition) = self.winner_ids.get(name) {
                    if self.table.winners[name].kind != SymbolKind::Variable {
                        return Err(link_error(format!(
                            "input {index}: {name} is imported as a variable but defined as a function"
                        )));
                    }
                    self.variable_imports.push(VariableImport {
                        name: name.clone(),
                        placeholder: ids.id(old, &mut self.next_id),
                        definition,
                        import_type: ty,
                    });
                    return Ok(());
                }
                let key = (name.clone(), ty);
                if let Some(&existing) = self.imports.get(&key) {
                    ids.map.insert(old, existing);
                    ids.skip.insert(old);
                    return Ok(());
                }
                let new = ids.id(old, &mut self.next_id);
                self.imports.insert(key, new);
                self.linkage
                    .push(linkage_decoration(new, name, LinkageType::Import));
            }
            Some((name, _)) if ids.skip.contains(&old) => {
                // A LinkOnceODR variable that lost to another definition.
                let _ = name;
                return Ok(());
            }
            _ => {}
        }
        let new = ids.remap(inst, &mut self.next_id);
        self.out.types_global_values.push(new);
        Ok(())
    }

    fn function(&mut self, index: usize, f: &dr::Function, ids: &mut IdMap) {
        let Some(old) = f.def_id() else { return };
        let linkage = self.table.linkage_of(index, old).cloned();
        if let Some((name, ty)) = &linkage {
            if *ty == LinkageType::Import {
                let fn_type = match f.def.as_ref().and_then(|d| d.operands.get(1)) {
                    Some(Operand::IdRef(t)) => ids.id(*t, &mut self.next_id),
                    _ => 0,
                };
                if let Some(&definition) = self.winner_ids.get(name) {
                    self.function_imports.push(FunctionImport {
                        name: name.clone(),
                        import_type: fn_type,
                        definition,
                    });
                    ids.skip_function(f);
                    return;
                }
                let key = (name.clone(), fn_type);
                if let Some(&existing) = self.imports.get(&key) {
                    ids.map.insert(old, existing);
                    ids.skip_function(f);
                    return;
                }
                let new = ids.id(old, &mut self.next_id);
                self.imports.insert(key, new);
                self.linkage
                    .push(linkage_decoration(new, name, LinkageType::Import));
                let decl = self.remap_function(f, ids);
                self.declarations.push(decl);
                return;
            }
            if ids.skip.contains(&old) {
                // A LinkOnceODR definition that lost to another definition.
                ids.skip_function(f);
                return;
            }
        }
        let new = self.remap_function(f, ids);
        if let Some((name, _)) = linkage {
            if self.table.duplicates.contains_key(&(index, old)) {
                self.duplicates.push(Duplicate {
                    winner: self.winner_ids[&name],
                    id: new.def_id().unwrap_or(0),
                    name,
                });
            }
        }
        self.definitions.push(new);
    }

    fn remap_function(&mut self, f: &dr::Function, ids: &mut IdMap) -> dr::Function {
        let next = &mut self.next_id;
        dr::Function {
            def: f.def.as_ref().map(|i| ids.remap(i, next)),
            end: f.end.as_ref().map(|i| ids.remap(i, next)),
            parameters: f.parameters.iter().map(|i| ids.remap(i, next)).collect(),
            blocks: f
                .blocks
                .iter()
                .map(|b| dr::Block {
                    label: b.label.as_ref().map(|i| ids.remap(i, next)),
                    instructions: b.instructions.iter().map(|i| ids.remap(i, next)).collect(),
                })
                .collect(),
        }
    }
}
