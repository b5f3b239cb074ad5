//! Checkpoints that keep Cranelift's mid-end from sinking long arithmetic chains.
//!
//! The e-graph pass takes every pure instruction out of the layout and places it again
//! just before the first side-effecting instruction or terminator that needs it. Loads
//! stay where they were. In a long straight-line block (an unrolled dot product over
//! `__local` tiles) every load then runs first and every multiply-add last, each of
//! the loaded vectors live until the end: dozens of spills. After every few varying
//! results, the block ends in a jump that passes the values still needed as block
//! parameters, so that their computation is placed there, in source order. The jump
//! falls through and its moves coalesce: it costs nothing at run time. Only
//! floating-point vectors are passed (integer vectors are mostly per-lane addresses,
//! which a checked contiguous access needs only on its slow path).

use cranelift_codegen::ir::{self, InstBuilder, Value};

use super::storage::Stored;
use super::value::Lv;
use super::Tr;
use crate::analysis::liveness::AT_END;
use crate::spirv::Id;

/// Varying chunks defined since the last checkpoint that trigger the next one.
const CHUNKS_PER_CHECKPOINT: usize = 16;

/// Ids of the current SPIR-V block defined since the last checkpoint.
#[derive(Clone, Debug, Default)]
pub(crate) struct Pending {
    ids: Vec<Id>,
    chunks: usize,
    /// The Cranelift block current when the SPIR-V block's lowering started: only
    /// values defined there or in blocks created since are known to dominate.
    start: Option<ir::Block>,
}

impl Tr<'_, '_> {
    /// Forgets the pending ids (a new SPIR-V block, or a barrier split: their values
    /// may not dominate what follows).
    pub(super) fn checkpoint_reset(&mut self) {
        self.pending.ids.clear();
        self.pending.chunks = 0;
        self.pending.start = self.b.current_block();
    }

    /// Whether `v` is a floating-point vector defined in the block the current SPIR-V
    /// block started in or in one created since (a value an instruction did not
    /// define again in this copy of a block may belong to another copy).
    ///
    /// Only floating-point vectors are passed: the chains worth keeping in order are
    /// arithmetic, while integer vectors are often per-lane addresses that an access
    /// with a checked affine form only needs on its slow path.
    fn defined_since_start(&self, v: Value) -> bool {
        let Some(start) = self.pending.start else {
            return false;
        };
        let dfg = &self.b.func.dfg;
        if !dfg.value_is_valid(v) || !dfg.value_type(v).lane_type().is_float() {
            return false;
        }
        let block = match dfg.value_def(v) {
            ir::ValueDef::Result(inst, _) => self.b.func.layout.inst_block(inst),
            ir::ValueDef::Param(block, _) => Some(block),
            _ => None,
        };
        block.is_some_and(|b| b.as_u32() >= start.as_u32())
    }

    /// After instruction `k` of block `bi` defined `r`: records it, and checkpoints
    /// once enough varying chunks are pending.
    pub(super) fn checkpoint_after(&mut self, bi: usize, k: usize, r: Option<Id>) {
        if self.regions.points.contains(&(bi, k)) {
            self.checkpoint_reset();
            return;
        }
        // A huge kernel is compiled without the mid-end (`crate::tiers`): nothing
        // reorders its instructions, and a block per checkpoint would only multiply
        // the block boundaries its allocator passes every live value through.
        // A block emitted chunk by chunk (`chunk_major`) has its own jumps.
        let Some(r) = r.filter(|_| !self.huge && !self.chunk_major) else {
            return;
        };
        // Loads only a later broadcast reads are placeholders until then.
        if self.broadcast_loads.contains(&r) {
            return;
        }
        let chunks: usize = match self.vals.get(&r) {
            Some(Stored::Direct(leaves)) => leaves
                .iter()
                .map(|l| match l {
                    Lv::V(c) if c.iter().all(|&v| self.defined_since_start(v)) => c.len(),
                    _ => 0,
                })
                .sum(),
            _ => 0,
        };
        if chunks == 0 {
            return;
        }
        self.pending.ids.push(r);
        self.pending.chunks += chunks;
        if self.pending.chunks >= CHUNKS_PER_CHECKPOINT {
            self.checkpoint(bi, k);
        }
    }

    /// Ends the Cranelift block with a jump passing the varying chunks of the pending
    /// ids still used after instruction `k` of block `bi`, and redefines them from the
    /// new block's parameters.
    fn checkpoint(&mut self, bi: usize, k: usize) {
        let ids = std::mem::take(&mut self.pending.ids);
        self.pending.chunks = 0;
        let live: Vec<Id> = ids
            .into_iter()
            .filter(|&id| {
                self.regions
                    .uses
                    .uses_of(id)
                    .iter()
                    .any(|&(ub, uk)| ub != bi || uk > k || uk == AT_END)
            })
            .collect();
        // (id, leaf index) of every chunk vector passed, in the order of `args`.
        let mut plan: Vec<(Id, usize)> = Vec::new();
        let mut args: Vec<Value> = Vec::new();
        for id in &live {
            if let Some(Stored::Direct(leaves)) = self.vals.get(id) {
                for (li, l) in leaves.iter().enumerate() {
                    if let Lv::V(c) = l {
                        if c.iter().all(|&v| self.defined_since_start(v)) {
                            plan.push((*id, li));
                            args.extend(c.iter().copied());
                        }
                    }
                }
            }
        }
        let Some(here) = self.b.current_block() else {
            return;
        };
        let filled = self
            .b
            .func
            .layout
            .last_inst(here)
            .is_some_and(|i| self.b.func.dfg.insts[i].opcode().is_terminator());
        if args.is_empty() || filled || self.b.is_unreachable() {
            return;
        }
        let (_, params) = self.jump_to_new_block(&args);
        let mut rest = params.into_iter();
        for (id, li) in plan {
            if let Some(Stored::Direct(leaves)) = self.vals.get_mut(&id) {
                if let Some(Lv::V(c)) = leaves.get_mut(li) {
                    for x in c.iter_mut() {
                        if let Some(p) = rest.next() {
                            *x = p;
                        }
                    }
                }
            }
        }
    }

    /// Ends the current block with a jump passing `args` to a new block, which
    /// becomes current; returns it and its parameters (one per argument). Values
    /// computed before the jump cannot be sunk past it by the mid-end.
    pub(super) fn jump_to_new_block(&mut self, args: &[Value]) -> (ir::Block, Vec<Value>) {
        let next = self.b.create_block();
        for v in args {
            let ty = self.b.func.dfg.value_type(*v);
            self.b.append_block_param(next, ty);
        }
        let ba: Vec<ir::BlockArg> = args.iter().map(|v| ir::BlockArg::Value(*v)).collect();
        self.b.ins().jump(next, &ba);
        self.b.switch_to_block(next);
        self.b.seal_block(next);
        (next, self.b.block_params(next).to_vec())
    }
}
