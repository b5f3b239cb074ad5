//! Who defines and who imports what: the `LinkageAttributes` of every input, and for
//! each exported name the one definition that every import of it will use.
//!
//! Rules: an `Export` beats a `LinkOnceODR` of the same name; of several
//! `LinkOnceODR` definitions the first is kept; a second `Export` of a function is
//! kept until `fixup` has compared it with the first (identical definitions fold,
//! others are an error); a second `Export` of a variable is an error.

use std::collections::HashMap;

use rspirv::dr::{self, Operand};
use rspirv::spirv::{Decoration, LinkageType, Op, Word};

use super::link_error;
use crate::CompileError;

/// Functions and variables are the things that link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    Function,
    Variable,
}

/// A definition that other inputs may import.
#[derive(Clone, Copy, Debug)]
pub struct Definition {
    pub module: usize,
    pub id: Word,
    pub kind: SymbolKind,
    pub linkage: LinkageType,
}

/// The linkage of every input, resolved.
pub struct SymbolTable {
    /// Per input: id -> (name, linkage type) from its `LinkageAttributes`.
    pub linkage: Vec<HashMap<Word, (String, LinkageType)>>,
    /// Exported name -> the definition imports resolve to.
    pub winners: HashMap<String, Definition>,
    /// `(input, id)` of `LinkOnceODR` definitions that lost to another definition of
    /// their name: not emitted, their uses go to the winner.
    pub dropped: HashMap<(usize, Word), String>,
    /// `(input, id)` of a further `Export` of a function: emitted, then folded into the
    /// winner if identical (else the link fails).
    pub duplicates: HashMap<(usize, Word), String>,
}

/// `(name, linkage type)` of a `LinkageAttributes` decoration.
pub fn linkage_attributes(inst: &dr::Instruction) -> Option<(Word, String, LinkageType)> {
    if inst.class.opcode != Op::Decorate {
        return None;
    }
    match inst.operands.as_slice() {
        [Operand::IdRef(target), Operand::Decoration(Decoration::LinkageAttributes), Operand::LiteralString(name), Operand::LinkageType(ty)] => {
            Some((*target, name.clone(), *ty))
        }
        _ => None,
    }
}

impl SymbolTable {
    /// Reads the linkage of `inputs` and picks the definition of every exported name.
    pub fn new(inputs: &[dr::Module]) -> Result<SymbolTable, CompileError> {
        let mut table = SymbolTable {
            linkage: Vec::with_capacity(inputs.len()),
            winners: HashMap::new(),
            dropped: HashMap::new(),
            duplicates: HashMap::new(),
        };
        for (index, m) in inputs.iter().enumerate() {
            let mut linkage = HashMap::new();
            for inst in &m.annotations {
                if let Some((target, name, ty)) = linkage_attributes(inst) {
                    linkage.insert(target, (name, ty));
                }
            }
            for f in &m.functions {
                let Some(id) = f.def_id() else { continue };
                let Some((name, ty)) = linkage.get(&id) else {
                    continue;
                };
                let is_declaration = f.blocks.is_empty();
                if (*ty == LinkageType::Import) != is_declaration {
                    return Err(link_error(format!(
                        "input {index}: function {name} is {} but has linkage {ty:?}",
                        if is_declaration {
                            "a declaration"
                        } else {
                            "defined"
                        }
                    )));
                }
                if *ty != LinkageType::Import {
                    table.define(
                        name,
                        Definition {
                            module: index,
                            id,
                            kind: SymbolKind::Function,
                            linkage: *ty,
                        },
                    )?;
                }
            }
            for inst in &m.types_global_values {
                if inst.class.opcode != Op::Variable {
                    continue;
                }
                let Some(id) = inst.result_id else { continue };
                let Some((name, ty)) = linkage.get(&id) else {
                    continue;
                };
                if *ty != LinkageType::Import {
                    table.define(
                        name,
                        Definition {
                            module: index,
                            id,
                            kind: SymbolKind::Variable,
                            linkage: *ty,
                        },
                    )?;
                }
            }
            table.linkage.push(linkage);
        }
        Ok(table)
    }

    fn define(&mut self, name: &str, def: Definition) -> Result<(), CompileError> {
        let Some(winner) = self.winners.get(name).copied() else {
            self.winners.insert(name.to_string(), def);
            return Ok(());
        };
        if winner.kind != def.kind {
            return Err(link_error(format!(
                "symbol {name} is a function in one input and a variable in another (inputs {} and {})",
                winner.module, def.module
            )));
        }
        match (winner.linkage, def.linkage) {
            (_, LinkageType::LinkOnceODR) => {
                self.dropped.insert((def.module, def.id), name.to_string());
            }
            (LinkageType::LinkOnceODR, _) => {
                self.dropped
                    .insert((winner.module, winner.id), name.to_string());
                self.winners.insert(name.to_string(), def);
            }
            _ if def.kind == SymbolKind::Variable => {
                return Err(link_error(format!(
                    "variable {name} is defined in more than one program (inputs {} and {})",
                    winner.module, def.module
                )));
            }
            _ => {
                self.duplicates
                    .insert((def.module, def.id), name.to_string());
            }
        }
        Ok(())
    }

    /// The linkage of `id` in input `module`.
    pub fn linkage_of(&self, module: usize, id: Word) -> Option<&(String, LinkageType)> {
        self.linkage[module].get(&id)
    }
}
