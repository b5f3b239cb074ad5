//! Function rules: the declared function type, body or import, labels and branch
//! targets, the entry block, phi placement and predecessor lists, `OpVariable`
//! placement, merge targets, return types, and that every operand is a value defined
//! where it is used (its definition dominates the use; for a phi, the end of the
//! incoming block). Per-instruction typing is in `ops`.

use std::collections::HashMap;

use super::{err, Validator, Values};
use crate::analysis::cfg::{immediate_dominators, reverse_post_order};
use crate::spirv::for_each_operand;
use crate::spirv::{Function, Id, Op, Storage, Terminator, Type};
use crate::CompileError;

/// Immediate dominators of the blocks reachable from block 0 (`usize::MAX` for
/// unreachable ones), by the same algorithm as the lowering's `Cfg`.
fn dominators(succs: &[Vec<usize>], preds: &[Vec<usize>]) -> Vec<usize> {
    let n = succs.len();
    let rpo = reverse_post_order(n, 0, |b| &succs[b]);
    let mut pos = vec![usize::MAX; n];
    for (i, &b) in rpo.iter().enumerate() {
        pos[b] = i;
    }
    immediate_dominators(&rpo, &pos, n, |b| preds[b].clone())
}

/// Whether `a` dominates `b` (both reachable).
fn dominates(idom: &[usize], a: usize, mut b: usize) -> bool {
    loop {
        if a == b {
            return true;
        }
        if b == 0 || idom[b] == usize::MAX {
            return false;
        }
        b = idom[b];
    }
}

impl Validator<'_> {
    pub(super) fn function(&self, f: &Function) -> Result<(), CompileError> {
        let bad = |why: String| err(format!("function {}: {why}", f.name));
        match self.ty(f.ty) {
            Some(Type::Function { ret, params }) => {
                if !self.same(*ret, f.ret) {
                    return Err(bad(format!(
                        "returns {} but its type %{} returns {}",
                        self.type_name(f.ret),
                        f.ty,
                        self.type_name(*ret)
                    )));
                }
                if params.len() != f.params.len()
                    || params
                        .iter()
                        .zip(&f.params)
                        .any(|(t, p)| !self.same(*t, p.1))
                {
                    return Err(bad(format!(
                        "its parameters do not match its type %{}",
                        f.ty
                    )));
                }
            }
            _ => return Err(bad(format!("%{} is not a function type", f.ty))),
        }
        match (f.blocks.is_empty(), &f.import) {
            (true, None) => {
                return Err(bad(
                    "a function without a body must be imported (LinkageAttributes Import)".into(),
                ))
            }
            (false, Some(_)) => return Err(bad("an imported function cannot have a body".into())),
            (true, Some(_)) => return Ok(()),
            _ => {}
        }
        let n = f.blocks.len();
        let index: HashMap<Id, usize> = f
            .blocks
            .iter()
            .enumerate()
            .map(|(i, b)| (b.label, i))
            .collect();
        let mut succs = vec![Vec::new(); n];
        let mut preds = vec![Vec::new(); n];
        for (i, b) in f.blocks.iter().enumerate() {
            for s in b.term.successors() {
                let si = *index.get(&s).ok_or_else(|| {
                    bad(format!(
                        "block %{} branches to %{s}, which is not a block of this function",
                        b.label
                    ))
                })?;
                if si == 0 {
                    return Err(bad(format!(
                        "block %{} branches to the entry block",
                        b.label
                    )));
                }
                if !succs[i].contains(&si) {
                    succs[i].push(si);
                    preds[si].push(i);
                }
            }
        }
        for m in &f.merges {
            for t in std::iter::once(m.merge).chain(m.continue_target) {
                if !index.contains_key(&t) {
                    return Err(bad(format!(
                        "the merge instruction of block %{} names %{t}, which is not a block of this function",
                        m.block
                    )));
                }
            }
            if m.merge == m.block || m.continue_target == Some(m.merge) {
                return Err(bad(format!(
                    "the merge instruction of block %{} names the same block twice",
                    m.block
                )));
            }
        }
        let idom = dominators(&succs, &preds);
        // Values of the function and where they are defined (block, position).
        let mut values = Values {
            m: self.m,
            local: HashMap::new(),
        };
        let mut def_at: HashMap<Id, (usize, usize)> = HashMap::new();
        for (p, ty) in &f.params {
            values.local.insert(*p, *ty);
        }
        for (bi, b) in f.blocks.iter().enumerate() {
            for (k, i) in b.insts.iter().enumerate() {
                if let Some(r) = i.result {
                    let ty =
                        i.ty.ok_or_else(|| bad(format!("%{r} has no result type")))?;
                    values.local.insert(r, ty);
                    def_at.insert(r, (bi, k));
                }
            }
        }
        for (bi, b) in f.blocks.iter().enumerate() {
            let reachable = idom[bi] != usize::MAX;
            let mut phis_done = false;
            let mut variables_done = bi != 0;
            for (k, inst) in b.insts.iter().enumerate() {
                let at = |why: String| {
                    bad(format!(
                        "{} in block %{}: {why}",
                        super::ops::describe(inst, self.m),
                        b.label
                    ))
                };
                match &inst.op {
                    Op::Nop => continue,
                    Op::Phi(incoming) => {
                        if phis_done {
                            return Err(at("OpPhi after other instructions of the block".into()));
                        }
                        self.phi_incoming(incoming, &index, &preds[bi])
                            .map_err(|e| at(e.message))?;
                        for (v, p) in incoming {
                            let pi = index[p];
                            let ok = match def_at.get(v) {
                                Some((db, _)) => {
                                    !reachable
                                        || idom[pi] == usize::MAX
                                        || dominates(&idom, *db, pi)
                                }
                                None => values.ty(*v).is_some(),
                            };
                            if !ok {
                                return Err(at(format!(
                                    "%{v} is not available at the end of block %{p}"
                                )));
                            }
                        }
                    }
                    Op::Variable { .. } => {
                        if variables_done {
                            return Err(at(
                                "OpVariable must be among the first instructions of the entry block".into(),
                            ));
                        }
                        phis_done = true;
                        let st = inst.ty.and_then(|t| self.pointer(t)).map(|p| p.0);
                        if st != Some(Storage::Function) {
                            return Err(at(
                                "a variable in a function must have storage class Function".into(),
                            ));
                        }
                    }
                    op => {
                        phis_done = true;
                        variables_done = true;
                        let mut problem = None;
                        for_each_operand(op, |id| {
                            if problem.is_some() {
                                return;
                            }
                            if values.ty(id).is_none() {
                                problem = Some(format!("operand %{id} is not a value"));
                            } else if let Some((db, dk)) = def_at.get(&id) {
                                let ok = !reachable
                                    || if *db == bi {
                                        *dk < k
                                    } else {
                                        dominates(&idom, *db, bi)
                                    };
                                if !ok {
                                    problem = Some(format!(
                                        "operand %{id} is not defined before this use"
                                    ));
                                }
                            }
                        });
                        if let Some(p) = problem {
                            return Err(at(p));
                        }
                    }
                }
                self.op_types(&inst.op, inst.ty, &values)
                    .map_err(|e| at(e.message))?;
            }
            self.terminator(f, bi, &values, &def_at, &idom)
                .map_err(|e| bad(format!("block %{}: {}", b.label, e.message)))?;
        }
        Ok(())
    }

    /// A phi names each predecessor of its block exactly once, and nothing else.
    fn phi_incoming(
        &self,
        incoming: &[(Id, Id)],
        index: &HashMap<Id, usize>,
        preds: &[usize],
    ) -> Result<(), CompileError> {
        let mut seen = Vec::with_capacity(incoming.len());
        for (_, p) in incoming {
            let pi = *index
                .get(p)
                .ok_or_else(|| err(format!("%{p} is not a block of this function")))?;
            if !preds.contains(&pi) {
                return Err(err(format!("%{p} is not a predecessor of the block")));
            }
            if seen.contains(&pi) {
                return Err(err(format!("predecessor %{p} appears twice")));
            }
            seen.push(pi);
        }
        if seen.len() != preds.len() {
            return Err(err(format!(
                "{} incoming values for {} predecessors",
                seen.len(),
                preds.len()
            )));
        }
        Ok(())
    }

    fn terminator(
        &self,
        f: &Function,
        bi: usize,
        values: &Values<'_>,
        def_at: &HashMap<Id, (usize, usize)>,
        idom: &[usize],
    ) -> Result<(), CompileError> {
        let term = &f.blocks[bi].term;
        let reachable = idom[bi] != usize::MAX;
        let available = |id: Id| -> Result<Id, CompileError> {
            let ty = values
                .ty(id)
                .ok_or_else(|| err(format!("operand %{id} is not a value")))?;
            if let Some((db, _)) = def_at.get(&id) {
                if reachable && !dominates(idom, *db, bi) {
                    return Err(err(format!("operand %{id} is not defined before this use")));
                }
            }
            Ok(ty)
        };
        match term {
            Terminator::BranchCond { cond, .. } => {
                let t = available(*cond)?;
                if !matches!(self.ty(t), Some(Type::Bool)) {
                    return Err(err(format!(
                        "OpBranchConditional on %{cond} of type {}, not bool",
                        self.type_name(t)
                    )));
                }
            }
            Terminator::Switch {
                selector, targets, ..
            } => {
                let t = available(*selector)?;
                let bits = match self.ty(t) {
                    Some(Type::Int { bits }) => *bits,
                    _ => {
                        return Err(err(format!(
                            "OpSwitch on %{selector} of type {}, not an integer",
                            self.type_name(t)
                        )))
                    }
                };
                let mut seen = std::collections::HashSet::new();
                for (v, _) in targets {
                    if bits < 64 && *v >> bits != 0 {
                        return Err(err(format!(
                            "OpSwitch case {v:#x} does not fit the {bits}-bit selector"
                        )));
                    }
                    if !seen.insert(*v) {
                        return Err(err(format!("OpSwitch case {v} appears twice")));
                    }
                }
            }
            Terminator::Return => {
                if !matches!(self.ty(f.ret), Some(Type::Void)) {
                    return Err(err("OpReturn in a function that returns a value"));
                }
            }
            Terminator::ReturnValue(v) => {
                let t = available(*v)?;
                if matches!(self.ty(f.ret), Some(Type::Void)) || !self.same(t, f.ret) {
                    return Err(err(format!(
                        "OpReturnValue of type {} in a function returning {}",
                        self.type_name(t),
                        self.type_name(f.ret)
                    )));
                }
            }
            Terminator::Branch(_) | Terminator::Unreachable => {}
        }
        Ok(())
    }
}
