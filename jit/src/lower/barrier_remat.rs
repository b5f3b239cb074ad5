//! Values recomputed after barriers instead of kept in memory across them.
//!
//! A value used on the other side of a barrier normally lives in the sub-group's
//! home area: stored where it is defined, loaded where it is used
//! (`analysis::placement`). For values that are a short chain of integer or
//! address arithmetic on kernel arguments, constants and work-item built-ins (the
//! ids, row pointers and offsets every tiled kernel computes before its first
//! barrier: clbench `transpose` homed seven of them per sub-group) the store, the
//! load and the register that holds the home's base cost more than the arithmetic.
//! Such values are lowered again in each Cranelift block that reads them (their
//! operands likewise), so nothing of them crosses a barrier. The first lowering
//! also serves the rest of its block.

use std::collections::{HashMap, HashSet};

use super::value::Lv;
use super::Tr;
use crate::spirv::{ConvOp, Id, Op};
use crate::CompileError;

/// Longest chain of operations one recomputed value may stand for: beyond it the
/// value keeps its home.
const MAX_CHAIN: usize = 12;

impl Tr<'_, '_> {
    /// Picks the homed values to recompute instead (and the operands they are
    /// recomputed from): kernels with barriers only (a huge kernel's homes exist to
    /// keep values out of registers, not to cross barriers).
    pub(super) fn plan_barrier_remat(&mut self) {
        if self.regions.points.is_empty() {
            return;
        }
        let mut memo: HashMap<Id, Option<usize>> = HashMap::new();
        let mut homed: Vec<Id> = self.placement.homed.iter().copied().collect();
        homed.sort_unstable();
        let mut remat = HashSet::new();
        for id in homed {
            if self.private_offsets.contains_key(&id) {
                continue;
            }
            if self.chain_len(id, &mut memo).is_some() {
                self.collect_chain(id, &mut remat);
            }
        }
        self.remat = remat;
    }

    /// The number of operations `id` stands for when it can be recomputed anywhere
    /// (None: it cannot, or the chain is too long).
    fn chain_len(&self, id: Id, memo: &mut HashMap<Id, Option<usize>>) -> Option<usize> {
        if let Some(&known) = memo.get(&id) {
            return known;
        }
        // Cycles only go through phis, which are never recomputed.
        memo.insert(id, None);
        let result = self.def_op(id).and_then(|op| {
            if !recomputable(self, op) {
                return None;
            }
            let mut len = 1usize;
            let mut ok = true;
            super::super::analysis::for_each_operand(op, |o| {
                if !ok || self.is_invariant_leaf(o) {
                    return;
                }
                match self.chain_len(o, memo) {
                    Some(n) => len += n,
                    None => ok = false,
                }
            });
            (ok && len <= MAX_CHAIN).then_some(len)
        });
        memo.insert(id, result);
        result
    }

    /// Adds `id` and the recomputable ids it is computed from to `out`.
    fn collect_chain(&self, id: Id, out: &mut HashSet<Id>) {
        if !out.insert(id) {
            return;
        }
        if let Some(op) = self.def_op(id) {
            let mut operands = Vec::new();
            super::super::analysis::for_each_operand(op, |o| operands.push(o));
            for o in operands {
                if !self.is_invariant_leaf(o) {
                    self.collect_chain(o, out);
                }
            }
        }
    }

    /// The operation defining `id` in the kernel body (None for parameters,
    /// constants and globals).
    fn def_op(&self, id: Id) -> Option<&Op> {
        let (b, k) = self.regions.uses.def_of(id)?;
        let inst = self.f.blocks.get(b)?.insts.get(k)?;
        (inst.result == Some(id)).then_some(&inst.op)
    }

    /// Operands that are valid everywhere in the body: constants, module globals
    /// and kernel parameters. (An id an analysis made up, with no definition the
    /// use lists know, is none of these: a value computed from it keeps its home.)
    fn is_invariant_leaf(&self, id: Id) -> bool {
        self.m.constants.contains_key(&id)
            || self.m.globals.contains_key(&id)
            || self.f.params.iter().any(|&(p, _)| p == id)
    }

    /// The leaves of recomputed value `id` in the current Cranelift block: the
    /// block's earlier result, or its definition lowered here again.
    pub(super) fn rematerialize(&mut self, id: Id) -> Result<Vec<Lv>, CompileError> {
        if let Some(leaves) = self.cached_in_block(id) {
            return Ok(leaves);
        }
        let (b, k) =
            self.regions.uses.def_of(id).ok_or_else(|| {
                CompileError::codegen(format!("recomputed %{id} has no definition"))
            })?;
        let f = self.f;
        let inst = &f.blocks[b].insts[k];
        // The whole value, whatever lane a single-lane block views (`get` narrows
        // it for its caller).
        let single = self.single_lane.take();
        let r = self.lower_inst(b, k, inst);
        self.single_lane = single;
        r?;
        self.cached_in_block(id)
            .ok_or_else(|| CompileError::codegen(format!("recomputing %{id} did not define it")))
    }
}

/// Whether `op` is cheap, pure integer or address arithmetic, or a read of a
/// work-item built-in, that gives the same result wherever it is lowered.
fn recomputable(t: &Tr<'_, '_>, op: &Op) -> bool {
    match op {
        Op::Binary(b, ..) => b.is_index_arithmetic(),
        Op::Convert { op, .. } => matches!(op, ConvOp::UConvert | ConvOp::SConvert),
        Op::Bitcast(_) | Op::PtrCast(_) | Op::CopyObject(_) => true,
        Op::CompositeExtract { .. } | Op::AccessChain { .. } => true,
        Op::Load { ptr, .. } => t.m.globals.get(ptr).is_some_and(|g| g.builtin.is_some()),
        _ => false,
    }
}
