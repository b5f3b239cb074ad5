//! The masked (partially linearised) body of a kernel with divergent branches.
//!
//! Blocks are emitted in the CFG's linear order (loops contiguous). Each block has a
//! pending mask (the lanes that branched to it so far); a block runs only if some lane
//! of its mask is set and clears the mask when it starts. When it has none, control
//! jumps over the block and its whole skip region (the blocks after it that it
//! dominates within its loops: none of them can have lanes either), so the code of a
//! block dominates the code of its region and values flow to their uses as plain SSA
//! values (`analysis::placement`). A branch ORs `mask & cond` / `mask & !cond` into its
//! successors' masks; phis are accumulators written on the edge under the edge's
//! mask. After the last block of a loop, control jumps back to the header while lanes
//! took back edges. Returns simply drop lanes.
//!
//! Per position `i` of the linear order: `check[i]` (skip unless the mask has lanes),
//! the block's code, then landing pads around the checks that close the loops ending
//! there (a skip arrives after the checks of the loops inside the skipped region). Each pending mask and phi accumulator is reset at the start of the
//! innermost block whose region holds the block and all its predecessors, so that the
//! frontend finds every variable's definition within a few blocks.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::{self, condcodes::IntCC, InstBuilder, Value};

use super::control::{BodyState, LiveOut, PhiAcc};
use super::state::Cell;
use super::value::{Elem, Lv, Val};
use super::Tr;
use crate::spirv::{Id, Op, Terminator};
use crate::CompileError;

impl Tr<'_, '_> {
    /// Emits the kernel body for the current sub-group, continuing at `exit` when all
    /// lanes are done. `resume` holds the barrier resume point to dispatch on, if any.
    pub fn emit_body(
        &mut self,
        resume: Option<Value>,
        exit: ir::Block,
    ) -> Result<(), CompileError> {
        if !self.uni.any_divergence() {
            return self.emit_body_uniform(resume, exit);
        }
        self.masked_body = true;
        self.single_lane_blocks.clear();
        self.begin_packed_masks();
        let r = self.emit_masked_body(resume, exit);
        self.end_packed_masks();
        self.masked_body = false;
        self.body_state = None;
        r
    }

    fn emit_masked_body(
        &mut self,
        resume: Option<Value>,
        exit: ir::Block,
    ) -> Result<(), CompileError> {
        let order = self.cfg.order.clone();
        let n = self.f.blocks.len();
        let np = order.len();
        let nm = (self.w / 4) as usize;
        // The empty mask in the form of the pending masks' cells.
        let zero = self.mask_cell_zero();
        let entry_mask = self
            .sgenv
            .as_ref()
            .map(|s| s.mask.clone())
            .ok_or_else(|| CompileError::codegen("sub-group env missing"))?;
        let phi_count = self
            .f
            .blocks
            .iter()
            .flat_map(|b| &b.insts)
            .filter(|i| matches!(i.op, Op::Phi(_)))
            .count();
        self.begin_state((n * nm + phi_count * 2).max(1), np);
        // Every variable gets a value at the body's start (resumed sub-groups and
        // skipped regions find it there); the masks are reset nearer their use below.
        // (Cells in memory need only the entry mask: every read of the others comes
        // after a reset.)
        // Blocks that loops exit to: their masks and phis change only when lanes
        // leave the loop, so they need not ride in registers around it.
        let exit_target: Vec<bool> = (0..n)
            .map(|b| {
                self.cfg.preds[b]
                    .iter()
                    .any(|&p| self.cfg.loop_of[p].is_some_and(|l| !self.cfg.in_loop(l, b)))
            })
            .collect();
        let mut masks = Vec::with_capacity(n);
        for b in 0..n {
            let cells = self.new_mask_cells(exit_target[b]);
            if b == order[0] {
                self.write_mask_cells(&cells, &entry_mask);
            } else {
                for cell in &cells {
                    if let Cell::Var(v, _) = cell {
                        self.b.def_var(*v, zero);
                    }
                }
            }
            masks.push(cells);
        }
        let mut phis = HashMap::new();
        for (b, blk) in self.f.blocks.iter().enumerate() {
            for inst in &blk.insts {
                if let (Op::Phi(_), Some(r), Some(ty)) = (&inst.op, inst.result, inst.ty) {
                    let elems = self.elems(ty)?;
                    let accs = self.new_phi_acc(r, &elems, exit_target[b]);
                    phis.insert(r, accs);
                }
            }
        }
        self.init_phi_accumulators(&phis);
        let (first_pred, first_latch) = self.pred_positions();
        let mut st = BodyState {
            blocks: vec![None; n],
            masks,
            phis,
            liveout: HashMap::new(),
            liveout_by_loop: HashMap::new(),
            liveout_end: HashMap::new(),
            via_header: HashMap::new(),
            branchless_latch: HashSet::new(),
            first_pred,
            first_latch,
            lone_edges: self.lone_edge_blocks(),
        };
        self.liveout_accumulators(&mut st)?;
        // Where each variable is reset: the innermost block whose skip region holds
        // the block (or the loop's uses) and every predecessor.
        let mut resets: Vec<Vec<Cell>> = vec![Vec::new(); np];
        for (i, &b) in order.iter().enumerate() {
            let mut at = i;
            for &p in &self.cfg.preds[b] {
                let pp = self.cfg.pos[p];
                if pp != usize::MAX {
                    at = self.placement.common_region(at, pp);
                }
            }
            if b != order[0] {
                resets[at].extend(st.masks[b].iter().copied());
            }
            for inst in &self.f.blocks[b].insts {
                if let (Op::Phi(_), Some(r)) = (&inst.op, inst.result) {
                    for a in st.phis.get(&r).map(Vec::as_slice).unwrap_or(&[]) {
                        resets[at].extend(a.cells().iter().copied());
                    }
                }
            }
        }
        for (id, (l, accs, _)) in &st.liveout {
            let mut at = self.cfg.loops[*l].span.0;
            if let Some(&end) = st.liveout_end.get(id) {
                at = self.placement.common_region(at, end);
            }
            for cells in accs {
                resets[at].extend(cells.iter().copied());
            }
        }
        // Loops ending at each position, innermost first.
        let mut loop_ends: Vec<Vec<usize>> = vec![Vec::new(); np];
        let mut loops: Vec<usize> = (0..self.cfg.loops.len()).collect();
        loops.sort_by_key(|&l| self.cfg.loops[l].size);
        for l in loops {
            loop_ends[self.cfg.loops[l].span.1].push(l);
        }
        let is_header: Vec<bool> = {
            let mut h = vec![false; np];
            for lp in &self.cfg.loops {
                h[lp.span.0] = true;
            }
            h
        };
        let check: Vec<ir::Block> = (0..np).map(|_| self.b.create_block()).collect();
        // Landing pads of each position: before each of the loop-end checks there
        // (and after the last). A skip over a region lands past the checks of the
        // loops inside the region, so that no path jumps back into a loop whose
        // header it did not pass.
        let pads: Vec<Vec<ir::Block>> = loop_ends
            .iter()
            .map(|ends| (0..=ends.len()).map(|_| self.b.create_block()).collect())
            .collect();
        let skip_target = |j: usize| -> ir::Block {
            let e = self.placement.region_end[j];
            let inside = loop_ends[e]
                .iter()
                .filter(|&&l| self.cfg.loops[l].span.0 > j)
                .count();
            pads[e][inside]
        };
        let skip_to: Vec<ir::Block> = (0..np).map(skip_target).collect();
        for (i, &b) in order.iter().enumerate() {
            st.blocks[b] = Some(check[i]);
        }
        match resume {
            Some(id) => {
                // Dispatch: 0 = start, k = after barrier k.
                let targets = self.new_resume_blocks();
                let mut all = vec![check[0]];
                all.extend(targets);
                self.emit_dispatch(id, &all);
            }
            None => {
                self.b.ins().jump(check[0], &[]);
            }
        }
        // Where a block's code starts, past its check: a loop's back-edge jumps there
        // directly (it has just tested the header's mask).
        let run: Vec<ir::Block> = (0..np).map(|_| self.b.create_block()).collect();
        self.body_state = Some(st);
        // Joins every lane reaches once run under the entry mask (see
        // `analysis::reconverge`): no test, and a barrier there saves no mask.
        let entry_masked = crate::analysis::reconverge::entry_mask_blocks(self.cfg);
        for (i, &bi) in order.iter().enumerate() {
            self.b.switch_to_block(check[i]);
            self.b.seal_block(check[i]);
            let mcells = self.state().masks[bi].clone();
            if i != 0 && entry_masked[bi] {
                self.b.ins().jump(run[i], &[]);
            } else if i != 0 {
                // The test only: a check block holding nothing else is one jump
                // threading sees through (`thread`).
                let any = self.mask_cells_any(&mcells);
                self.b.ins().brif(any, run[i], &[], skip_to[i], &[]);
            } else {
                self.b.ins().jump(run[i], &[]);
            }
            self.b.switch_to_block(run[i]);
            if !is_header[i] {
                self.b.seal_block(run[i]);
            }
            // A header's run block is reached from the check and from the loop's end.
            let m: Vec<Value> = if entry_masked[bi] {
                entry_mask.clone()
            } else {
                self.read_mask_cells(&mcells)
            };
            // A single-block loop whose header resets nothing may loop inside its
            // full-mask copy (see `branch_full`).
            let self_loop = is_header[i]
                && resets[i].is_empty()
                && self.cfg.loop_of[bi].is_some_and(|l| {
                    let lp = &self.cfg.loops[l];
                    lp.header == bi && lp.size == 1 && loop_ends[i].first() == Some(&l)
                });
            for c in std::mem::take(&mut resets[i]) {
                self.zero_cell(c);
            }
            for c in &mcells {
                self.write_cell(*c, zero);
            }
            self.mask = m.clone();
            self.mask_full = None;
            let land = pads[i][0];
            if self.duplicate_for_full_mask(bi) {
                self.emit_duplicated(bi, &m, land, self_loop.then_some(zero))?;
            } else {
                self.lower_block(bi)?;
                self.b.ins().jump(land, &[]);
            }
            self.b.switch_to_block(land);
            self.b.seal_block(land);
            for (k, &l) in loop_ends[i].iter().enumerate() {
                let h = self.cfg.loops[l].header;
                let hcells = self.state().masks[h].clone();
                let any = self.mask_cells_any(&hcells);
                let hp = self.cfg.pos[h];
                let cont = pads[i][k + 1];
                self.b.ins().brif(any, run[hp], &[], cont, &[]);
                self.b.seal_block(run[hp]);
                self.b.switch_to_block(cont);
                self.b.seal_block(cont);
            }
            let next = check.get(i + 1).copied().unwrap_or(exit);
            self.b.ins().jump(next, &[]);
        }
        Ok(())
    }

    /// Emits block `bi` twice, one copy assuming every lane is active (vector
    /// accesses, no guards) and one for partial masks; the values other blocks use
    /// meet in a join's parameters, in the first copy's shapes.
    /// `self_loop`: `bi` is a single-block loop whose start cleared its pending
    /// mask to this value; the first copy may branch back to its own start
    /// (`branch_full`), so that block is sealed only after it.
    fn emit_duplicated(
        &mut self,
        bi: usize,
        m: &[Value],
        after: ir::Block,
        self_loop: Option<Value>,
    ) -> Result<(), CompileError> {
        let full = self.mask_all(m);
        let bf = self.b.create_block();
        let bs = self.b.create_block();
        let join = self.b.create_block();
        self.b.ins().brif(full, bf, &[], bs, &[]);
        self.b.switch_to_block(bf);
        if let Some(zero) = self_loop {
            self.self_loop = Some((bi, bf, zero));
        } else {
            self.b.seal_block(bf);
        }
        self.full_state = Some(true);
        self.mask_full = Some(full);
        self.dup_defs = Some(Default::default());
        let first = self.lower_block(bi);
        if self_loop.is_some() {
            self.self_loop = None;
            self.b.seal_block(bf);
        }
        let carried = match first {
            Ok(()) => self.carried_ids(bi),
            Err(e) => {
                self.full_state = None;
                self.dup_defs = None;
                return Err(e);
            }
        };
        let shapes = self.direct_leaves(&carried);
        let mut args_f = Vec::new();
        for (id, shape) in &shapes {
            let v = self
                .carry_values(*id, shape)?
                .ok_or_else(|| CompileError::codegen("internal: carried value changed shape"))?;
            args_f.extend(v);
        }
        let types_f: Vec<ir::Type> = args_f
            .iter()
            .map(|v| self.b.func.dfg.value_type(*v))
            .collect();
        let ba: Vec<ir::BlockArg> = args_f.iter().map(|v| ir::BlockArg::Value(*v)).collect();
        self.b.ins().jump(join, &ba);
        self.b.switch_to_block(bs);
        self.b.seal_block(bs);
        self.mask = m.to_vec();
        self.full_state = Some(false);
        self.mask_full = Some(full);
        self.dup_second = true;
        let second = self.lower_block(bi);
        let mut args_s = Vec::new();
        if second.is_ok() {
            for (id, shape) in &shapes {
                match self.carry_values(*id, shape)? {
                    Some(v) => args_s.extend(v),
                    None => self.dup_conflict = true,
                }
            }
        }
        self.dup_second = false;
        self.dup_defs = None;
        self.full_state = None;
        second?;
        if self.dup_conflict || args_s.len() != args_f.len() {
            // The caller retries without duplication.
            self.dup_conflict = true;
            args_s = args_f.clone();
        }
        let ba: Vec<ir::BlockArg> = args_s.iter().map(|v| ir::BlockArg::Value(*v)).collect();
        self.b.ins().jump(join, &ba);
        self.b.switch_to_block(join);
        self.b.seal_block(join);
        for t in &types_f {
            self.b.append_block_param(join, *t);
        }
        let params = self.b.block_params(join).to_vec();
        let mut rest: &[Value] = &params;
        for (id, shape) in &shapes {
            self.define_carried(*id, shape, &mut rest);
        }
        self.b.ins().jump(after, &[]);
        Ok(())
    }

    /// Ids the first copy of duplicated block `bi` defined that code outside the
    /// block reads (directly, or through a loop's live-out accumulator).
    fn carried_ids(&self, bi: usize) -> Vec<Id> {
        let mut ids: Vec<Id> = self
            .dup_defs
            .as_ref()
            .map(|d| d.iter().copied().collect())
            .unwrap_or_default();
        ids.retain(|id| {
            self.state().liveout.contains_key(id)
                || self
                    .regions
                    .uses
                    .uses_of(*id)
                    .iter()
                    .any(|&(ub, _)| ub != bi)
        });
        ids.sort_unstable();
        ids
    }

    /// Per block, whether its phis may be written without a blend (see
    /// [`BodyState::lone_edges`]): a loop header whose predecessors are one block of
    /// the enclosing loop (before it) and one latch of its own loop, each reaching it
    /// by a single edge. Then the entry edge runs once per run of the loop and the
    /// latch once per iteration, each right before the header's next run.
    fn lone_edge_blocks(&self) -> Vec<bool> {
        let n = self.f.blocks.len();
        let mut lone = vec![false; n];
        for (l, lp) in self.cfg.loops.iter().enumerate() {
            let h = lp.header;
            let preds = &self.cfg.preds[h];
            if preds.len() != 2 || self.cfg.loop_of[h] != Some(l) {
                continue;
            }
            let hp = self.cfg.pos[h];
            let label = self.f.blocks[h].label;
            let (mut entry, mut latch) = (0, 0);
            for &p in preds {
                let pp = self.cfg.pos[p];
                if pp == usize::MAX || self.edge_count(p, label) != 1 {
                    break;
                }
                if pp < hp && self.cfg.loop_of[p] == lp.parent {
                    entry += 1;
                } else if pp >= hp && self.cfg.loop_of[p] == Some(l) {
                    latch += 1;
                }
            }
            lone[h] = entry == 1 && latch == 1;
        }
        lone
    }

    /// How many edges of the masked terminator of block `from` lead to `to`.
    fn edge_count(&self, from: usize, to: Id) -> usize {
        match &self.f.blocks[from].term {
            Terminator::Branch(t) => usize::from(*t == to),
            Terminator::BranchCond { t, f, .. } if t == f => usize::from(*t == to),
            term => term.successors().iter().filter(|s| **s == to).count(),
        }
    }

    /// Per block, the first linear position of a predecessor, and of a predecessor at
    /// or after the block itself (a back edge); `usize::MAX` when none.
    pub(super) fn pred_positions(&self) -> (Vec<usize>, Vec<usize>) {
        let n = self.f.blocks.len();
        let mut first = vec![usize::MAX; n];
        let mut latch = vec![usize::MAX; n];
        for b in 0..n {
            let pb = self.cfg.pos[b];
            for &p in &self.cfg.preds[b] {
                let pp = self.cfg.pos[p];
                if pp == usize::MAX {
                    continue;
                }
                first[b] = first[b].min(pp);
                if pp >= pb {
                    latch[b] = latch[b].min(pp);
                }
            }
        }
        (first, latch)
    }

    /// Live-out accumulators of loops: for each value defined in loop L (its
    /// innermost) and used outside L, a varying copy written when lanes leave L.
    fn liveout_accumulators(&mut self, st: &mut BodyState) -> Result<(), CompileError> {
        let mut ids: Vec<Id> = self.regions.uses.defined_ids().collect();
        ids.sort_unstable();
        for id in ids {
            let Some((db, _)) = self.regions.uses.def_of(id) else {
                continue;
            };
            let Some(l) = self.cfg.loop_of[db] else {
                continue;
            };
            // Uses in blocks outside the loop (phi operands on exit edges read the
            // accumulator too: they are copied at the end of a block outside).
            let mut end = None;
            for &(ub, _) in self.regions.uses.uses_of(id) {
                let pu = self.cfg.pos[ub];
                if pu != usize::MAX && !self.cfg.in_loop(l, ub) {
                    end = Some(end.map_or(pu, |e: usize| e.max(pu)));
                }
            }
            let Some(end) = end else {
                continue;
            };
            if self.plan_left_together(st, id, (db, l), end) {
                continue;
            }
            let ty = self.type_of(id)?;
            let elems = self.elems(ty)?;
            let mut accs = Vec::new();
            for e in elems.iter() {
                let (cty, _) = e.chunk();
                let cells: Vec<Cell> = (0..self.nchunks(*e))
                    .map(|_| {
                        let c = self.new_cold_cell(cty);
                        if let Cell::Var(..) = c {
                            self.zero_cell(c);
                        }
                        c
                    })
                    .collect();
                accs.push(cells);
            }
            let lo: LiveOut = (l, accs, elems);
            st.liveout.insert(id, lo);
            st.liveout_by_loop.entry(l).or_default().push(id);
            st.liveout_end.insert(id, end);
        }
        Ok(())
    }

    /// The terminator of block `bi` in the masked model.
    fn lower_masked_terminator(&mut self, bi: usize) -> Result<(), CompileError> {
        let blk = &self.f.blocks[bi];
        let m = self.mask.clone();
        // In the full-mask copy of a block every lane takes its edges that the whole
        // mask takes: no blending into the target's phis and mask.
        let whole = if self.full_state == Some(true) {
            EdgeMask::All
        } else {
            EdgeMask::Lanes(&m)
        };
        match &blk.term {
            Terminator::Branch(t) => self.edge_with(bi, *t, whole, true)?,
            Terminator::BranchCond { cond, t, f: fl } => {
                if t == fl {
                    self.edge(bi, *t, &m, true)?;
                } else {
                    let c = self.get(*cond)?;
                    let branchless = self.state().branchless_latch.contains(&bi);
                    if let (Lv::U(_), true) = (&c.leaves[0], branchless) {
                        // Every active lane goes the same way, but a branch would give
                        // the values passed to the header two uses (see
                        // `BodyState::via_header`): both edges under masks instead.
                        // The exit first: its work is skipped when no lane leaves, and
                        // the header's phis are written after that branch has joined.
                        let cm = self.bool_mask(&c.leaves[0]);
                        let mt = self.mask_and(&m, &cm);
                        let mf = self.mask_and_not(&m, &cm);
                        let header = self.cfg.loop_of[bi].map(|l| self.cfg.loops[l].header);
                        let mut edges = [(*t, mt), (*fl, mf)];
                        if header.map(|h| self.f.blocks[h].label) == Some(*t) {
                            edges.swap(0, 1);
                        }
                        for (target, em) in edges {
                            self.edge(bi, target, &em, false)?;
                        }
                    } else if let Lv::U(cv) = c.leaves[0] {
                        // A uniform condition: every active lane goes the same way, so
                        // a real branch, each side one edge under the whole mask.
                        let (bt, bf, join) = (
                            self.b.create_block(),
                            self.b.create_block(),
                            self.b.create_block(),
                        );
                        self.b.ins().brif(cv, bt, &[], bf, &[]);
                        for (blk, target) in [(bt, *t), (bf, *fl)] {
                            self.b.switch_to_block(blk);
                            self.b.seal_block(blk);
                            self.edge(bi, target, &m, true)?;
                            self.b.ins().jump(join, &[]);
                        }
                        self.b.switch_to_block(join);
                        self.b.seal_block(join);
                    } else {
                        let cm = self.bool_mask(&c.leaves[0]);
                        if self.full_state == Some(true) && self.cfg.loop_of[bi].is_some() {
                            return self.branch_full(bi, *t, *fl, &m, &cm);
                        }
                        if let Some((all, none)) = self.affine_all_none(&cm) {
                            return self.branch_decided(bi, [*t, *fl], &m, &cm, all, none);
                        }
                        let mt = self.mask_and(&m, &cm);
                        let mf = self.mask_and_not(&m, &cm);
                        self.edge(bi, *t, &mt, false)?;
                        self.edge(bi, *fl, &mf, false)?;
                    }
                }
            }
            Terminator::Switch {
                selector,
                default,
                targets,
            } => {
                let sel = self.get(*selector)?;
                let e = sel.elems[0];
                let mut taken: Vec<Value> = self.zero_vec(Elem::Bool);
                for (v, t) in targets {
                    let k = self.scalar_const(e, *v);
                    let eq = self.vec_op2(
                        e,
                        &sel.leaves[0],
                        &Lv::U(k),
                        |t, a, b| t.b.ins().icmp(IntCC::Equal, a, b),
                        |t, a, b| t.b.ins().icmp(IntCC::Equal, a, b),
                    );
                    let eqm = self.int_cmp_to_mask(e, eq);
                    let em = self.mask_and(&m, &eqm);
                    let em = self.mask_and_not(&em, &taken);
                    taken = self.mask_or(&taken, &eqm);
                    self.edge(bi, *t, &em, false)?;
                }
                let dm = self.mask_and_not(&m, &taken);
                self.edge(bi, *default, &dm, false)?;
            }
            Terminator::Return | Terminator::ReturnValue(_) | Terminator::Unreachable => {}
        }
        Ok(())
    }

    /// A divergent branch at the end of block `bi` under mask `m` whose condition
    /// `cm` has scalar answers "every lane" (`all`) and "no lane" (`none`)
    /// (`affine_cmp`): when one holds, only that edge is taken, under the whole mask
    /// and without building `cm` (its vector code then sits on the mixed path only);
    /// else both edges under their masks.
    fn branch_decided(
        &mut self,
        bi: usize,
        [t, f]: [Id; 2],
        m: &[Value],
        cm: &[Value],
        all: Value,
        none: Value,
    ) -> Result<(), CompileError> {
        // The values the edges pass to phis, read before the branches (a value first
        // read in one of them would not reach the others).
        for target in [t, f] {
            if let Some(&ti) = self.cfg.index.get(&target) {
                self.edge_phi_inputs(bi, ti)?;
            }
        }
        let [b_all, b_rest, b_none, b_mixed, join] = [(); 5].map(|_| self.b.create_block());
        self.b.ins().brif(all, b_all, &[], b_rest, &[]);
        self.b.switch_to_block(b_rest);
        self.b.seal_block(b_rest);
        self.b.ins().brif(none, b_none, &[], b_mixed, &[]);
        let whole = if self.full_state == Some(true) {
            EdgeMask::All
        } else {
            EdgeMask::Lanes(m)
        };
        for (blk, target) in [(b_all, t), (b_none, f)] {
            self.b.switch_to_block(blk);
            self.b.seal_block(blk);
            self.edge_with(bi, target, whole, true)?;
            self.b.ins().jump(join, &[]);
        }
        self.b.switch_to_block(b_mixed);
        self.b.seal_block(b_mixed);
        let mt = self.mask_and(m, cm);
        let mf = self.mask_and_not(m, cm);
        self.edge(bi, t, &mt, false)?;
        self.edge(bi, f, &mf, false)?;
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
        self.b.seal_block(join);
        Ok(())
    }

    /// Lowers the instructions and terminator of block `bi` under `self.mask`.
    pub(crate) fn lower_block(&mut self, bi: usize) -> Result<(), CompileError> {
        let single = self.enter_single_lane(bi)?;
        let r = self.lower_block_insts(bi);
        if single {
            self.leave_single_lane();
        }
        r?;
        self.note_single_lane_targets(bi)?;
        self.lower_masked_terminator(bi)
    }

    /// A divergent branch at the end of loop block `bi` whose mask `m` is known full
    /// (the full-mask copy of a duplicated block). When every lane goes the same way,
    /// as in all but the last iteration of `for (i = gid; i < n; i += gsz)`, only that
    /// edge is taken and without lane blending (phis and live-outs take the new
    /// values, the target's mask becomes full, the other edge changes nothing); mixed
    /// conditions take both edges under their masks.
    fn branch_full(
        &mut self,
        bi: usize,
        t: Id,
        f: Id,
        m: &[Value],
        cm: &[Value],
    ) -> Result<(), CompileError> {
        let [b_all, b_some, b_none, b_mixed, join] = [(); 5].map(|_| self.b.create_block());
        // An affine comparison is decided by its first and last lanes when they do not
        // wrap; the vector test is only for the rest.
        // (Their edges get their own copies: a block shared with the vector test
        // would make the register allocator load the vector test's constants on the
        // way into it, in every iteration of the loop.)
        if let Some((all, none)) = self.affine_all_none(cm) {
            let [b_all1, b_not_all, b_none1, b_vec] = [(); 4].map(|_| self.b.create_block());
            self.b.ins().brif(all, b_all1, &[], b_not_all, &[]);
            self.b.switch_to_block(b_not_all);
            self.b.seal_block(b_not_all);
            self.b.ins().brif(none, b_none1, &[], b_vec, &[]);
            for (blk, target) in [(b_all1, t), (b_none1, f)] {
                self.b.switch_to_block(blk);
                self.b.seal_block(blk);
                self.edge_with(bi, target, EdgeMask::All, true)?;
                self.all_lanes_continue(bi, target, join)?;
            }
            self.b.switch_to_block(b_vec);
            self.b.seal_block(b_vec);
        }
        let all = self.mask_all(cm);
        self.b.ins().brif(all, b_all, &[], b_some, &[]);
        self.b.switch_to_block(b_all);
        self.b.seal_block(b_all);
        self.edge_with(bi, t, EdgeMask::All, true)?;
        self.all_lanes_continue(bi, t, join)?;
        self.b.switch_to_block(b_some);
        self.b.seal_block(b_some);
        let any = self.mask_any(cm);
        self.b.ins().brif(any, b_mixed, &[], b_none, &[]);
        self.b.switch_to_block(b_none);
        self.b.seal_block(b_none);
        self.edge_with(bi, f, EdgeMask::All, true)?;
        self.all_lanes_continue(bi, f, join)?;
        self.b.switch_to_block(b_mixed);
        self.b.seal_block(b_mixed);
        let mt = self.mask_and(m, cm);
        let mf = self.mask_and_not(m, cm);
        self.edge(bi, t, &mt, true)?;
        self.edge(bi, f, &mf, true)?;
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
        self.b.seal_block(join);
        Ok(())
    }

    /// After every lane took the edge from `bi` to `to` (under a full mask): back to
    /// the start of the full-mask copy when that is the back edge of the single-block
    /// loop being lowered (what the loop-end check, the header's check and its
    /// full-mask test would decide, minus their work), else on to `join`.
    fn all_lanes_continue(
        &mut self,
        bi: usize,
        to: Id,
        join: ir::Block,
    ) -> Result<(), CompileError> {
        let target = self.cfg.index.get(&to).copied();
        match self.self_loop {
            Some((lb, start, zero)) if lb == bi && target == Some(bi) => {
                // The header clears its pending mask when it starts (with the same
                // value: the start's parameter for it stays redundant).
                for c in self.state().masks[bi].clone() {
                    self.write_cell(c, zero);
                }
                self.b.ins().jump(start, &[]);
            }
            _ => {
                self.b.ins().jump(join, &[]);
            }
        }
        Ok(())
    }

    /// Control leaving block `from` for `to` under mask `em` (`nonempty`: known to
    /// hold a lane): pending mask, loop live-outs and phis. An edge leaving a loop
    /// is taken by no lane in most iterations: its work is skipped then.
    fn edge(
        &mut self,
        from: usize,
        to: Id,
        em: &[Value],
        nonempty: bool,
    ) -> Result<(), CompileError> {
        self.edge_with(from, to, EdgeMask::Lanes(em), nonempty)
    }

    /// [`Self::edge`] for the lanes of a mask or for every lane (no blending).
    fn edge_with(
        &mut self,
        from: usize,
        to: Id,
        em: EdgeMask<'_>,
        nonempty: bool,
    ) -> Result<(), CompileError> {
        let ti = *self
            .cfg
            .index
            .get(&to)
            .ok_or_else(|| CompileError::malformed(format!("branch to unknown block %{to}")))?;
        // Everything read from the values of the kernel is read here, before any
        // branch, so that no value is first materialised in a conditional block.
        // Lanes leaving loops keep their own values of the loop's live-outs (those
        // defined on the way to this exit).
        let mut leaving: Vec<(Val, Vec<Vec<Cell>>)> = Vec::new();
        let mut l = self.cfg.loop_of[from];
        let leaves_loop = l.is_some_and(|li| !self.cfg.in_loop(li, ti));
        while let Some(li) = l {
            if self.cfg.in_loop(li, ti) {
                break;
            }
            let ids = self
                .state()
                .liveout_by_loop
                .get(&li)
                .cloned()
                .unwrap_or_default();
            for id in ids {
                let def = self.regions.uses.def_of(id).map(|d| d.0);
                if def.is_some_and(|d| self.cfg.dominates(d, from)) {
                    if let Some((_, accs, _)) = self.state().liveout.get(&id).cloned() {
                        let v = self.get_direct(id)?;
                        leaving.push((v, accs));
                    }
                }
            }
            l = self.cfg.loops[li].parent;
        }
        let inputs = self.edge_phi_inputs(from, ti)?;
        let guard = leaves_loop && !nonempty;
        let after = if guard {
            let EdgeMask::Lanes(em) = em else {
                unreachable!("an all-lanes edge is nonempty")
            };
            let any = self.mask_any(em);
            let take = self.b.create_block();
            let after = self.b.create_block();
            // Lanes leave a loop in a few of its iterations only.
            self.b.set_cold_block(take);
            self.b.ins().brif(any, take, &[], after, &[]);
            self.b.switch_to_block(take);
            self.b.seal_block(take);
            Some(after)
        } else {
            None
        };
        let nonempty = nonempty || guard;
        let mcells = self.state().masks[ti].clone();
        match em {
            EdgeMask::All => self.or_into_mask_cells(&mcells, None),
            EdgeMask::Lanes(em) => self.or_into_mask_cells(&mcells, Some(em)),
        }
        for (v, accs) in leaving {
            for ((lv, e), cells) in v.leaves.iter().zip(v.elems.iter()).zip(&accs) {
                let new = match em {
                    EdgeMask::All => Lv::V(self.chunks_of(*e, lv)),
                    EdgeMask::Lanes(em) => {
                        let olds: Vec<Value> = cells.iter().map(|x| self.read_cell(*x)).collect();
                        self.select_vec(*e, em, lv, &Lv::V(olds))
                    }
                };
                if let Lv::V(ch) = new {
                    for (cell, c) in cells.iter().zip(ch) {
                        self.write_cell(*cell, c);
                    }
                }
            }
        }
        let lone = self.state().lone_edges.get(ti).copied().unwrap_or(false);
        // "Any lane takes this edge", computed once and only if a scalar phi needs it.
        let mut any: Option<Value> = None;
        for input in inputs {
            let (r, v, val, accs) = (input.phi, input.from, input.val, input.accs);
            for ((acc, lv), e) in accs.iter().zip(&val.leaves).zip(val.elems.iter()) {
                // A uniform phi, or an affine header phi (every lane taking this (only)
                // back edge or entry is in the same iteration, so the base is shared):
                // one scalar, replaced when any lane takes the edge.
                let scalar = match (acc, lv) {
                    (PhiAcc::U(cell), Lv::U(x)) => Some((*cell, *x)),
                    (PhiAcc::U(..), _) => {
                        return Err(super::control::uniform_phi_gets_varying(r, v))
                    }
                    (PhiAcc::A(cell, s), Lv::A(x, t)) if t == s => Some((*cell, *x)),
                    (PhiAcc::A(cell, 0), Lv::U(x)) => Some((*cell, *x)),
                    (PhiAcc::A(..), _) => {
                        self.shape_conflict = true;
                        None
                    }
                    (PhiAcc::V(cells), _) if lone => {
                        let ch = self.chunks_of(*e, lv);
                        for (cell, c) in cells.iter().zip(ch) {
                            self.write_cell(*cell, c);
                        }
                        None
                    }
                    (PhiAcc::V(cells), _) => {
                        let new = match em {
                            EdgeMask::All => Lv::V(self.chunks_of(*e, lv)),
                            EdgeMask::Lanes(em) => {
                                let olds: Vec<Value> =
                                    cells.iter().map(|c| self.read_cell(*c)).collect();
                                self.select_vec(*e, em, lv, &Lv::V(olds))
                            }
                        };
                        if let Lv::V(chunks) = new {
                            for (cell, c) in cells.iter().zip(chunks) {
                                self.write_cell(*cell, c);
                            }
                        }
                        None
                    }
                };
                if let Some((cell, x)) = scalar {
                    if lone || nonempty {
                        self.write_cell(cell, x);
                        continue;
                    }
                    let EdgeMask::Lanes(em) = em else {
                        unreachable!("an all-lanes edge is nonempty")
                    };
                    let a = match any {
                        Some(a) => a,
                        None => *any.insert(self.mask_any(em)),
                    };
                    let old = self.read_cell(cell);
                    let new = self.b.ins().select(a, x, old);
                    self.write_cell(cell, new);
                }
            }
        }
        if let Some(after) = after {
            self.b.ins().jump(after, &[]);
            self.b.switch_to_block(after);
            self.b.seal_block(after);
        }
        Ok(())
    }

    /// Whether block `bi` is worth emitting twice (full mask / partial mask): it
    /// accesses memory and holds no barrier.
    fn duplicate_for_full_mask(&self, bi: usize) -> bool {
        if !self.allow_dup || self.single_lane_blocks.contains_key(&bi) {
            return false;
        }
        if self.regions.points.iter().any(|(b, _)| *b == bi) {
            return false;
        }
        let insts = &self.f.blocks[bi].insts;
        if insts.len() > 400 {
            return false;
        }
        insts.iter().any(|i| {
            // Memory accesses (OpenCL.std 171..=181 are vloadn..vstorea_halfn_r); pure
            // arithmetic gains nothing from a full-mask copy.
            matches!(
                i.op,
                Op::Load { .. } | Op::Store { .. } | Op::CopyMemory { .. } | Op::Atomic { .. }
            ) || matches!(
                i.op,
                Op::ExtInst {
                    opcode: 171..=181,
                    ..
                }
            )
        })
    }

    /// The control state a sub-group stopping at a barrier in block `at` must keep
    /// (pending masks, phi accumulators and loop live-outs that are read after the
    /// barrier and may hold something by then) and that lives in variables (cells in
    /// memory are the sub-group's own and survive the barrier). `at_end`: the stop
    /// is at the end of `at` (a yield in a latch), so the edges out of `at` itself may
    /// have been taken in earlier iterations (lanes that left a divergent loop).
    pub(crate) fn body_state_vars(&self, at: usize, at_end: bool) -> Vec<Cell> {
        let mut keep = Vec::new();
        let Some(st) = &self.body_state else {
            return keep;
        };
        let p = self.cfg.pos[at];
        // A block's state is live at the barrier when an edge into it may have been
        // taken before the barrier and the block runs after it: later in the order, or
        // as the header of a loop around the barrier (then through a back edge taken
        // earlier in this iteration).
        let mut live: Vec<usize> = Vec::new();
        for &b in &self.cfg.order[p + 1..] {
            if st.first_pred[b] < p || (at_end && st.first_pred[b] == p) {
                live.push(b);
            }
        }
        let mut l = self.cfg.loop_of[at];
        while let Some(li) = l {
            let h = self.cfg.loops[li].header;
            if st.first_latch[h] < p {
                live.push(h);
            }
            l = self.cfg.loops[li].parent;
        }
        for &b in &live {
            if let Some(m) = st.masks.get(b) {
                keep.extend(m.iter().copied());
            }
            for inst in &self.f.blocks[b].insts {
                let (Op::Phi(_), Some(id)) = (&inst.op, inst.result) else {
                    continue;
                };
                for a in st.phis.get(&id).map(Vec::as_slice).unwrap_or(&[]) {
                    keep.extend(a.cells().iter().copied());
                }
            }
        }
        for (id, (l, accs, _)) in &st.liveout {
            let started = self.cfg.loops[*l].span.0 <= p;
            let used_later = st.liveout_end.get(id).is_some_and(|&e| e > p);
            if started && used_later {
                keep.extend(accs.iter().flatten().copied());
            }
        }
        // `via_header` values need nothing here: one read after a barrier would have
        // made them homed (`Placement::homed`), so none is read across one.
        keep.retain(|c| c.var().is_some());
        keep
    }
}

/// The lanes taking an edge: those of a mask, or (known when the code is emitted) all.
#[derive(Clone, Copy)]
enum EdgeMask<'a> {
    Lanes(&'a [Value]),
    All,
}
