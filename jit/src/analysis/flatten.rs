//! Inlining: turns a kernel and every function it calls into one flat control-flow
//! graph (OpenCL C has no recursion), so the other analyses and the lowering see a
//! single function. Each inlined instance gets fresh ids; `OpReturnValue` becomes a
//! branch to the call's continuation block, whose phi collects the returned values.
//! Calls to imported (body-less) functions are kept: lowering resolves them by name.

use std::collections::HashMap;

use crate::spirv::{Block, Function, Id, Inst, Module, Op, Terminator};
use crate::CompileError;

/// A kernel with all calls inlined.
#[derive(Clone, Debug)]
pub struct FlatFunction {
    pub name: String,
    pub params: Vec<(Id, Id)>,
    /// Entry block first.
    pub blocks: Vec<Block>,
    /// The first id not used by the module or the inlined copies.
    pub next_id: Id,
}

impl FlatFunction {
    /// The type of every parameter and instruction result (the analyses and the
    /// lowering look types up by id).
    pub fn value_types(&self) -> std::collections::HashMap<Id, Id> {
        let mut types: std::collections::HashMap<Id, Id> = self.params.iter().copied().collect();
        for i in self.blocks.iter().flat_map(|b| &b.insts) {
            if let (Some(r), Some(t)) = (i.result, i.ty) {
                types.insert(r, t);
            }
        }
        types
    }

    /// Replaces every value operand `id` by `f(id)`: instruction operands (phi
    /// values, not their predecessor labels) and terminator conditions, selectors
    /// and return values. For transformations that drop an instruction in favour of
    /// a value already defined.
    pub fn replace_uses(&mut self, f: impl Fn(Id) -> Id) {
        for b in &mut self.blocks {
            for i in &mut b.insts {
                crate::analysis::for_each_operand_mut(&mut i.op, |id| *id = f(*id));
            }
            match &mut b.term {
                Terminator::BranchCond { cond, .. } => *cond = f(*cond),
                Terminator::Switch { selector, .. } => *selector = f(*selector),
                Terminator::ReturnValue(v) => *v = f(*v),
                _ => {}
            }
        }
    }
}

/// Nesting depth beyond which we call it recursion.
const MAX_DEPTH: usize = 64;

/// Inlines every call reachable from `f`.
pub fn flatten(m: &Module, f: &Function) -> Result<FlatFunction, CompileError> {
    let mut fl = Flattener {
        m,
        next_id: m.bound.max(1),
        stack: vec![f.id],
    };
    let blocks = fl.body(f, &HashMap::new(), None)?;
    Ok(FlatFunction {
        name: f.name.clone(),
        params: f.params.clone(),
        blocks,
        next_id: fl.next_id,
    })
}

struct Flattener<'a> {
    m: &'a Module,
    next_id: Id,
    stack: Vec<Id>,
}

/// Where an inlined body returns to: the continuation block and its result phi.
struct ReturnTo {
    block: Id,
    /// (phi result id, incoming (value, block) pairs) when the callee returns a value.
    phi: Option<Id>,
}

impl Flattener<'_> {
    fn fresh(&mut self) -> Id {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Copies `f`'s blocks with `rename` applied (ids not in it are kept, and when
    /// `ret` is Some every local id is renamed to a fresh one), inlining calls.
    /// Returns the blocks and, for inlined bodies, the incoming values of the return phi.
    fn body(
        &mut self,
        f: &Function,
        params: &HashMap<Id, Id>,
        ret: Option<&ReturnTo>,
    ) -> Result<Vec<Block>, CompileError> {
        // Rename map: for an inlined instance every id defined in the function is fresh.
        let mut map: HashMap<Id, Id> = params.clone();
        if ret.is_some() {
            for b in &f.blocks {
                let n = self.fresh();
                map.insert(b.label, n);
                for i in &b.insts {
                    if let Some(r) = i.result {
                        let n = self.fresh();
                        map.insert(r, n);
                    }
                }
            }
        }
        let r = |id: Id| -> Id { map.get(&id).copied().unwrap_or(id) };
        let mut out: Vec<Block> = Vec::new();
        let mut ret_incoming: Vec<(Id, Id)> = Vec::new();
        // Original (renamed) label -> label of the block that now holds its terminator.
        let mut tail_of: HashMap<Id, Id> = HashMap::new();
        for b in &f.blocks {
            let mut cur = Block {
                label: r(b.label),
                insts: Vec::new(),
                term: Terminator::Unreachable,
            };
            for inst in &b.insts {
                let mut inst = rename_inst(inst, &r);
                inst.result = inst.result.map(&r);
                if let Op::Call { function, args } = &inst.op {
                    let callee = self.m.functions.get(function).ok_or_else(|| {
                        CompileError::malformed(format!(
                            "OpFunctionCall of %{function}, which is not a function"
                        ))
                    })?;
                    if callee.import.is_none() && !callee.blocks.is_empty() {
                        if self.stack.contains(&callee.id) || self.stack.len() > MAX_DEPTH {
                            return Err(CompileError::unsupported(format!(
                                "recursive call of {} (OpenCL C does not allow recursion)",
                                callee.name
                            )));
                        }
                        if callee.params.len() != args.len() {
                            return Err(CompileError::malformed(format!(
                                "call of {} with {} arguments, it takes {}",
                                callee.name,
                                args.len(),
                                callee.params.len()
                            )));
                        }
                        let pmap: HashMap<Id, Id> = callee
                            .params
                            .iter()
                            .map(|p| p.0)
                            .zip(args.iter().copied())
                            .collect();
                        let cont = self.fresh();
                        let to = ReturnTo {
                            block: cont,
                            phi: inst.result.filter(|_| {
                                !matches!(
                                    self.m.types.get(&callee.ret),
                                    Some(crate::spirv::Type::Void)
                                )
                            }),
                        };
                        self.stack.push(callee.id);
                        let (callee_blocks, incoming) = {
                            let blocks = self.body(callee, &pmap, Some(&to))?;
                            split_returns(blocks, &to)
                        };
                        self.stack.pop();
                        let entry = callee_blocks.first().map(|b| b.label).ok_or_else(|| {
                            CompileError::malformed(format!(
                                "function {} has no blocks",
                                callee.name
                            ))
                        })?;
                        cur.term = Terminator::Branch(entry);
                        out.push(std::mem::replace(
                            &mut cur,
                            Block {
                                label: cont,
                                insts: Vec::new(),
                                term: Terminator::Unreachable,
                            },
                        ));
                        out.extend(callee_blocks);
                        if let (Some(phi), Some(ty)) = (to.phi, inst.ty) {
                            cur.insts.push(Inst {
                                result: Some(phi),
                                ty: Some(ty),
                                op: Op::Phi(incoming),
                                wrap: Default::default(),
                            });
                        }
                        continue;
                    }
                }
                // Everything else, imported-function calls included, is copied.
                cur.insts.push(inst);
            }
            cur.term = match &b.term {
                Terminator::Return | Terminator::ReturnValue(_) if ret.is_some() => {
                    // Marked for split_returns: a return to the continuation.
                    let to = ret.map_or(0, |t| t.block);
                    if let Terminator::ReturnValue(v) = &b.term {
                        ret_incoming.push((r(*v), cur.label));
                    }
                    Terminator::Branch(to)
                }
                t => rename_term(t, &r),
            };
            tail_of.insert(r(b.label), cur.label);
            out.push(cur);
        }
        // Phis that name a predecessor whose terminator moved to a continuation block.
        for b in &mut out {
            for i in &mut b.insts {
                if let Op::Phi(inc) = &mut i.op {
                    for (_, pred) in inc.iter_mut() {
                        if let Some(t) = tail_of.get(pred) {
                            *pred = *t;
                        }
                    }
                }
            }
        }
        if let Some(to) = ret {
            // Stash the return incoming values in a marker phi in the continuation, picked
            // up by split_returns.
            if to.phi.is_some() {
                out.push(Block {
                    label: 0,
                    insts: vec![Inst {
                        result: None,
                        ty: None,
                        op: Op::Phi(
                            ret_incoming
                                .iter()
                                .map(|(v, b)| (*v, tail_of.get(b).copied().unwrap_or(*b)))
                                .collect(),
                        ),
                        wrap: Default::default(),
                    }],
                    term: Terminator::Unreachable,
                });
            }
        }
        Ok(out)
    }
}

/// Separates the marker block (label 0) that carries the return phi's incoming values.
fn split_returns(mut blocks: Vec<Block>, to: &ReturnTo) -> (Vec<Block>, Vec<(Id, Id)>) {
    let mut incoming = Vec::new();
    if to.phi.is_some() {
        if let Some(pos) = blocks.iter().position(|b| b.label == 0) {
            let marker = blocks.remove(pos);
            if let Some(Inst {
                op: Op::Phi(inc), ..
            }) = marker.insts.into_iter().next()
            {
                incoming = inc;
            }
        }
    }
    (blocks, incoming)
}

fn rename_term(t: &Terminator, r: &impl Fn(Id) -> Id) -> Terminator {
    match t {
        Terminator::Branch(b) => Terminator::Branch(r(*b)),
        Terminator::BranchCond { cond, t, f } => Terminator::BranchCond {
            cond: r(*cond),
            t: r(*t),
            f: r(*f),
        },
        Terminator::Switch {
            selector,
            default,
            targets,
        } => Terminator::Switch {
            selector: r(*selector),
            default: r(*default),
            targets: targets.iter().map(|(v, b)| (*v, r(*b))).collect(),
        },
        Terminator::ReturnValue(v) => Terminator::ReturnValue(r(*v)),
        other => other.clone(),
    }
}

/// Applies `r` to every id operand of `inst` and, for phis, to the predecessor labels
/// too (an inlined body's blocks are renamed, so its phis must name the new labels).
fn rename_inst(inst: &Inst, r: &impl Fn(Id) -> Id) -> Inst {
    let mut i = inst.clone();
    crate::analysis::for_each_operand_mut(&mut i.op, |id| *id = r(*id));
    if let Op::Phi(inc) = &mut i.op {
        for (_, pred) in inc.iter_mut() {
            *pred = r(*pred);
        }
    }
    i
}
