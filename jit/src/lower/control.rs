//! Control flow in the lane model: partial linearisation with per-block execution
//! masks.
//!
//! Blocks are emitted in the CFG's linear order (loops contiguous). Each block has a
//! pending mask (the lanes that branched to it so far); a block runs only if some
//! lane of its mask is set (otherwise the code jumps over it), and clears the mask
//! when it starts. A branch ORs `mask & cond` / `mask & !cond` into its successors'
//! masks; phis are accumulators written on the edge under the edge's mask. After the
//! last block of a loop, control jumps back to the header while lanes took back edges.
//! Returns simply drop lanes. Uniform branches cost a mask test, no lane-wise work.

use super::state::Cell;
use super::value::{Elem, Lv, Val};
use super::Tr;
use crate::spirv::{Id, Op, Terminator};
use crate::CompileError;
use cranelift_codegen::ir::{
    self,
    condcodes::{CondCode, IntCC},
    types, InstBuilder, Value,
};

/// Accumulator of a phi: one cell per leaf (uniform) or per chunk (varying).
#[derive(Clone, Debug)]
pub(crate) enum PhiAcc {
    U(Cell),
    V(Vec<Cell>),
    /// Affine phi (uniform bodies and single-latch loop headers): the base, with a
    /// known stride (0: uniform within the sub-group, read as a uniform value).
    A(Cell, i64),
}

impl PhiAcc {
    /// The cells of the accumulator.
    pub fn cells(&self) -> &[Cell] {
        match self {
            PhiAcc::U(c) | PhiAcc::A(c, _) => std::slice::from_ref(c),
            PhiAcc::V(cs) => cs,
        }
    }
}

/// State of the linearised body being emitted.
pub(crate) struct BodyState {
    /// Cranelift block of each SPIR-V block (by block index).
    pub blocks: Vec<Option<ir::Block>>,
    /// Pending mask of each block (W/4 i32x4 cells).
    pub masks: Vec<Vec<Cell>>,
    /// Phi accumulators.
    pub phis: std::collections::HashMap<Id, Vec<PhiAcc>>,
    /// Values defined in a loop that lanes leave in different iterations and used
    /// after it: id -> (loop, one accumulator per leaf chunk, element types). Loop
    /// exits write each leaving lane's value; uses outside the loop read it.
    pub liveout: std::collections::HashMap<Id, LiveOut>,
    /// The live-outs of each loop.
    pub liveout_by_loop: std::collections::HashMap<usize, Vec<Id>>,
    /// The last linear position where each live-out is read (accumulated or
    /// [`BodyState::via_header`]).
    pub liveout_end: std::collections::HashMap<Id, usize>,
    /// Values used after a loop that every lane leaves together, from its only
    /// exiting block, the latch, whose back edge passes them to a header phi:
    /// id -> (loop, phi). Uses after the loop read the phi's accumulator, which the
    /// latch writes for every lane (a lone edge) before the loop ends, so the value
    /// reaches them through the one jump that ends the latch instead of a second
    /// use on the exit path (which would keep Cranelift from folding the loads of
    /// its whole computation into their users).
    pub via_header: std::collections::HashMap<Id, (usize, Id)>,
    /// Latch blocks of loops with [`BodyState::via_header`] values: their uniform
    /// branch is lowered as two masked edges and one jump, without a branch that
    /// would split the values' uses.
    pub branchless_latch: std::collections::HashSet<usize>,
    /// Per block, the first linear position of a predecessor (`usize::MAX`: none).
    pub first_pred: Vec<usize>,
    /// Per block, the first linear position of a predecessor at or after it (a back
    /// edge; `usize::MAX`: none).
    pub first_latch: Vec<usize>,
    /// Per block, whether each edge into it is the only one taken between two runs
    /// of the block (a loop header with one entry edge from its parent loop and one
    /// back edge from its own loop): its phis are then written without a blend, as
    /// lanes outside the edge's mask do not run the block before the next write.
    pub lone_edges: Vec<bool>,
}

/// A loop live-out accumulator: (loop, per-leaf chunk cells, leaf element types).
pub(crate) type LiveOut = (usize, Vec<Vec<Cell>>, std::rc::Rc<Vec<Elem>>);

impl Tr<'_, '_> {
    /// Gives every phi accumulator kept in a variable a (zero) value at the start of
    /// the body, so that no value flows around the sub-group loop through them.
    pub(super) fn init_phi_accumulators(
        &mut self,
        phis: &std::collections::HashMap<Id, Vec<PhiAcc>>,
    ) {
        // Cells shared by several phis are set once.
        let mut done = std::collections::HashSet::new();
        for accs in phis.values() {
            for a in accs {
                for c in a.cells() {
                    if let Cell::Var(v, _) = c {
                        if done.insert(v.as_u32()) {
                            self.zero_cell(*c);
                        }
                    }
                }
            }
        }
    }

    /// The current value of phi `r`'s accumulator, one leaf per cell group.
    pub(super) fn read_phi_acc(&mut self, r: Id) -> Vec<Lv> {
        let accs = self.state().phis.get(&r).cloned().unwrap_or_default();
        accs.iter()
            .map(|a| match a {
                PhiAcc::U(c) => Lv::U(self.read_cell(*c)),
                PhiAcc::V(cs) => Lv::V(cs.iter().map(|c| self.read_cell(*c)).collect()),
                PhiAcc::A(c, 0) => Lv::U(self.read_cell(*c)),
                PhiAcc::A(c, s) => Lv::A(self.read_cell(*c), *s),
            })
            .collect()
    }

    /// Declares the accumulator of phi `r`: affine (contiguous layout, when the
    /// analysis allows), varying or uniform.
    /// `cold`: the phi's block is a loop exit (see [`Tr::new_cold_cell`]).
    pub(super) fn new_phi_acc(&mut self, r: Id, elems: &[Elem], cold: bool) -> Vec<PhiAcc> {
        self.new_phi_acc_with(r, elems, &mut |t: &mut Self, ty| {
            if cold {
                t.new_cold_cell(ty)
            } else {
                t.new_cell(ty)
            }
        })
    }

    /// [`Tr::new_phi_acc`] with the cells that `cell` gives (one per leaf or chunk,
    /// in order).
    fn new_phi_acc_with(
        &mut self,
        r: Id,
        elems: &[Elem],
        cell: &mut impl FnMut(&mut Self, ir::Type) -> Cell,
    ) -> Vec<PhiAcc> {
        let varying = self.uni.is_varying(r);
        let contiguous = self.sgenv.as_ref().is_some_and(|s| s.row.is_some());
        let affine = match self.shapes.get(&r) {
            Some(crate::analysis::affine::Shape::Affine(s))
                if contiguous && self.affine_phis && elems.len() == 1 && elems[0].is_int() =>
            {
                Some(*s)
            }
            // Uniform within the sub-group in this layout (a pointer walking a row of
            // `get_global_id(1)`): one scalar, stride 0.
            Some(crate::analysis::affine::Shape::Uniform)
                if contiguous && self.affine_phis && elems.len() == 1 && elems[0].is_int() =>
            {
                Some(0)
            }
            _ => None,
        };
        elems
            .iter()
            .map(|e| {
                if let Some(s) = affine {
                    PhiAcc::A(cell(self, e.scalar()), s)
                } else if varying {
                    let (cty, _) = e.chunk();
                    PhiAcc::V((0..self.nchunks(*e)).map(|_| cell(self, cty)).collect())
                } else {
                    PhiAcc::U(cell(self, e.scalar()))
                }
            })
            .collect()
    }

    /// Declares the phi accumulators of a uniform body. Phis of different blocks
    /// share cells: every edge into a block writes all of its phis right before
    /// jumping there and the block reads them first thing, so a read never sees
    /// another block's write. The frontend keeps a table over all blocks for each
    /// variable, so one variable per phi cost variables times blocks (2000 loops:
    /// 6000 phis over 50 000 blocks, 400 MB); shared, the cells are as many as the
    /// most phis of one block.
    fn phi_accumulators(
        &mut self,
    ) -> Result<std::collections::HashMap<Id, Vec<PhiAcc>>, CompileError> {
        let mut phis = std::collections::HashMap::new();
        // Per type: the cells so far, and how many of them the current block uses.
        let mut pool: std::collections::HashMap<ir::Type, (Vec<Cell>, usize)> =
            std::collections::HashMap::new();
        for blk in &self.f.blocks {
            for (cells, used) in pool.values_mut() {
                debug_assert!(*used <= cells.len());
                *used = 0;
            }
            for inst in &blk.insts {
                if let (Op::Phi(_), Some(r), Some(ty)) = (&inst.op, inst.result, inst.ty) {
                    let elems = self.elems(ty)?;
                    let accs = self.new_phi_acc_with(r, &elems, &mut |t: &mut Self, ty| {
                        let (cells, used) = pool.entry(ty).or_default();
                        if *used == cells.len() {
                            cells.push(t.new_cell(ty));
                        }
                        *used += 1;
                        cells[*used - 1]
                    });
                    phis.insert(r, accs);
                }
            }
        }
        Ok(phis)
    }

    /// The body of a kernel without divergent branches: real branches, one mask (the
    /// sub-group's) everywhere. Without barriers the body is emitted twice, for a
    /// full and for a partial sub-group.
    pub(super) fn emit_body_uniform(
        &mut self,
        resume: Option<Value>,
        exit: ir::Block,
    ) -> Result<(), CompileError> {
        let entry_mask = self
            .sgenv
            .as_ref()
            .map(|s| s.mask.clone())
            .ok_or_else(|| CompileError::codegen("sub-group env missing"))?;
        let n = self.f.blocks.len();
        self.begin_state(0, 0);
        let phis = self.phi_accumulators()?;
        self.init_phi_accumulators(&phis);
        let (first_pred, first_latch) = self.pred_positions();
        self.body_state = Some(BodyState {
            blocks: vec![None; n],
            masks: Vec::new(),
            phis,
            liveout: Default::default(),
            liveout_by_loop: Default::default(),
            liveout_end: Default::default(),
            via_header: Default::default(),
            branchless_latch: Default::default(),
            first_pred,
            first_latch,
            lone_edges: Vec::new(),
        });
        let copies: Vec<Option<bool>> = if self.allow_dup && self.all_sub_groups_full {
            // The entry mask is always full: no copy for partial sub-groups.
            vec![Some(true)]
        } else if self.allow_dup {
            vec![Some(true), Some(false)]
        } else {
            vec![None]
        };
        let mut starts = Vec::new();
        for _ in &copies {
            starts.push(self.b.create_block());
        }
        // Per copy: where to enter (start, then one resume block per barrier).
        let mut entries: Vec<Vec<ir::Block>> = Vec::new();
        for st in &starts {
            let mut e = vec![*st];
            if resume.is_some() {
                e.extend(self.new_resume_blocks());
            }
            entries.push(e);
        }
        let heads: Vec<ir::Block> = if copies.len() == 2 {
            // The entry mask is lanes `0..size`: full when `size` is W, one scalar
            // compare instead of reducing the W/4 mask chunks on every sub-group (the
            // chunks are then computed only on the partial copy's path).
            let size = self
                .sgenv
                .as_ref()
                .map(|s| s.size)
                .ok_or_else(|| CompileError::codegen("sub-group env missing"))?;
            let full = self
                .b
                .ins()
                .icmp_imm_s(IntCC::Equal, size, i64::from(self.w));
            let h0 = self.b.create_block();
            let h1 = self.b.create_block();
            self.b.ins().brif(full, h0, &[], h1, &[]);
            vec![h0, h1]
        } else {
            let h = self.b.create_block();
            self.b.ins().jump(h, &[]);
            vec![h]
        };
        for (h, e) in heads.iter().zip(&entries) {
            self.b.switch_to_block(*h);
            match resume {
                Some(id) => self.emit_dispatch(id, e),
                None => {
                    self.b.ins().jump(e[0], &[]);
                }
            }
        }
        let order = self.cfg.order.clone();
        for (ci, state) in copies.iter().enumerate() {
            if let Some(c) = self.bctx.as_mut() {
                c.resume = entries[ci][1..].to_vec();
            }
            let cbs: Vec<Option<ir::Block>> = (0..n)
                .map(|b| {
                    if self.cfg.reachable(b) {
                        Some(self.b.create_block())
                    } else {
                        None
                    }
                })
                .collect();
            if let Some(st) = self.body_state.as_mut() {
                st.blocks = cbs.clone();
            }
            self.b.switch_to_block(starts[ci]);
            let first = cbs[order[0]].ok_or_else(|| CompileError::codegen("no entry block"))?;
            self.b.ins().jump(first, &[]);
            for &bi in &order {
                let cb = cbs[bi].ok_or_else(|| CompileError::codegen("block missing"))?;
                self.b.switch_to_block(cb);
                self.mask = entry_mask.clone();
                self.full_state = *state;
                self.mask_full = None;
                self.lower_block_insts(bi)?;
                let blk = &self.f.blocks[bi];
                match blk.term.clone() {
                    Terminator::Branch(t) => {
                        self.uniform_edge(bi, t)?;
                        let tb = self.block_of(&cbs, t)?;
                        self.b.ins().jump(tb, &[]);
                    }
                    // Both ways to one block: a plain branch (the condition may
                    // vary, uniformity analysis does not count it as divergent).
                    Terminator::BranchCond { t, f: fl, .. } if t == fl => {
                        self.uniform_edge(bi, t)?;
                        let tb = self.block_of(&cbs, t)?;
                        self.b.ins().jump(tb, &[]);
                    }
                    Terminator::BranchCond { cond, t, f: fl } => {
                        let c = self.get(cond)?;
                        let Lv::U(cv) = c.leaves[0] else {
                            return Err(CompileError::codegen(
                                "internal: varying branch in a uniform body",
                            ));
                        };
                        let et = self.b.create_block();
                        let ef = self.b.create_block();
                        if self.stays_in_loop(t, fl) {
                            let inv = self.inverted_cond(cv);
                            self.b.ins().brif(inv, ef, &[], et, &[]);
                        } else {
                            self.b.ins().brif(cv, et, &[], ef, &[]);
                        }
                        for (eb, target) in [(et, t), (ef, fl)] {
                            self.b.switch_to_block(eb);
                            self.uniform_edge(bi, target)?;
                            let tb = self.block_of(&cbs, target)?;
                            self.b.ins().jump(tb, &[]);
                        }
                    }
                    Terminator::Switch {
                        selector,
                        default,
                        targets,
                    } => {
                        let sel = self.get(selector)?;
                        let e = sel.elems[0];
                        let Lv::U(sv) = sel.leaves[0] else {
                            return Err(CompileError::codegen(
                                "internal: varying switch in a uniform body",
                            ));
                        };
                        for (v, t) in targets {
                            let k = self.scalar_const(e, v);
                            let eq = self.b.ins().icmp(IntCC::Equal, sv, k);
                            let et = self.b.create_block();
                            let next = self.b.create_block();
                            self.b.ins().brif(eq, et, &[], next, &[]);
                            self.b.switch_to_block(et);
                            self.uniform_edge(bi, t)?;
                            let tb = self.block_of(&cbs, t)?;
                            self.b.ins().jump(tb, &[]);
                            self.b.switch_to_block(next);
                        }
                        self.uniform_edge(bi, default)?;
                        let tb = self.block_of(&cbs, default)?;
                        self.b.ins().jump(tb, &[]);
                    }
                    Terminator::Return | Terminator::ReturnValue(_) | Terminator::Unreachable => {
                        self.b.ins().jump(exit, &[]);
                    }
                }
            }
        }
        self.full_state = None;
        self.body_state = None;
        Ok(())
    }

    /// Whether, of the targets `t` and `f` of a two-way branch, `t` is in a loop that
    /// `f` leaves, earlier in the linear order. Cranelift lays blocks out (and its
    /// register allocators scan them) in the reverse postorder of a depth-first
    /// search that explores a branch's first successor first: a loop body there sits
    /// after everything that follows the loop, so the values it uses are live across
    /// the rest of the kernel (a thousand loops: a thousand bodies at the end, each
    /// keeping its values live across the others, quadratic allocation). Such a
    /// branch names the loop's exit first.
    pub(super) fn stays_in_loop(&self, t: Id, f: Id) -> bool {
        let (Some(&ti), Some(&fi)) = (self.cfg.index.get(&t), self.cfg.index.get(&f)) else {
            return false;
        };
        self.cfg.pos[ti] < self.cfg.pos[fi]
            && self.cfg.loop_of[ti].is_some_and(|l| !self.cfg.in_loop(l, fi))
    }

    /// The negation of branch condition `c`: the inverse comparison where `c` is
    /// one (the original is then usually dead), else `c == 0`.
    pub(super) fn inverted_cond(&mut self, c: Value) -> Value {
        if let Some(inst) = self.b.func.dfg.value_def(c).inst() {
            match self.b.func.dfg.insts[inst] {
                ir::InstructionData::IntCompare { cond, args, .. } => {
                    return self.b.ins().icmp(cond.complement(), args[0], args[1]);
                }
                ir::InstructionData::FloatCompare { cond, args, .. } => {
                    return self.b.ins().fcmp(cond.complement(), args[0], args[1]);
                }
                _ => {}
            }
        }
        self.b.ins().icmp_imm_s(IntCC::Equal, c, 0)
    }

    /// Fresh resume blocks, one per barrier point, installed in the barrier context.
    pub(super) fn new_resume_blocks(&mut self) -> Vec<ir::Block> {
        let v: Vec<ir::Block> = self
            .regions
            .points
            .iter()
            .map(|_| self.b.create_block())
            .collect();
        if let Some(c) = self.bctx.as_mut() {
            c.resume = v.clone();
        }
        v
    }

    fn block_of(&self, cbs: &[Option<ir::Block>], label: Id) -> Result<ir::Block, CompileError> {
        self.cfg
            .index
            .get(&label)
            .and_then(|i| cbs[*i])
            .ok_or_else(|| CompileError::malformed(format!("branch to unknown block %{label}")))
    }

    /// Phi copies on a taken edge of a uniform body.
    fn uniform_edge(&mut self, from: usize, to: Id) -> Result<(), CompileError> {
        let ti = *self
            .cfg
            .index
            .get(&to)
            .ok_or_else(|| CompileError::malformed(format!("branch to unknown block %{to}")))?;
        for EdgePhiInput {
            phi: r,
            from: v,
            val,
            accs,
        } in self.edge_phi_inputs(from, ti)?
        {
            for ((acc, lv), e) in accs.iter().zip(&val.leaves).zip(val.elems.iter()) {
                match acc {
                    PhiAcc::U(cell) => {
                        let Lv::U(x) = lv else {
                            return Err(uniform_phi_gets_varying(r, v));
                        };
                        self.write_cell(*cell, *x);
                    }
                    PhiAcc::V(cells) => {
                        let ch = self.chunks_of(*e, lv);
                        for (cell, c) in cells.iter().zip(ch) {
                            self.write_cell(*cell, c);
                        }
                    }
                    PhiAcc::A(cell, s) => match lv {
                        Lv::A(x, t) if t == s => self.write_cell(*cell, *x),
                        Lv::U(x) if *s == 0 => self.write_cell(*cell, *x),
                        _ => {
                            // The analysis promised an affine value: retry without.
                            self.shape_conflict = true;
                        }
                    },
                }
            }
        }
        Ok(())
    }

    /// The phis of block `ti` fed along the edge from block `from`, with what flows
    /// in. Reading every input
    /// before any accumulator is written is what a phi's parallel copy means (values
    /// and accumulators are separate variables, so the order is not observable).
    pub(super) fn edge_phi_inputs(
        &mut self,
        from: usize,
        ti: usize,
    ) -> Result<Vec<EdgePhiInput>, CompileError> {
        let from_label = self.f.blocks[from].label;
        let f = self.f;
        let mut inputs = Vec::new();
        for inst in &f.blocks[ti].insts {
            let (Op::Phi(inc), Some(r)) = (&inst.op, inst.result) else {
                continue;
            };
            for (v, pred) in inc {
                if *pred == from_label {
                    let val = self.get(*v)?;
                    let accs = self.state().phis.get(&r).cloned().unwrap_or_default();
                    inputs.push(EdgePhiInput {
                        phi: r,
                        from: *v,
                        val,
                        accs,
                    });
                }
            }
        }
        Ok(inputs)
    }

    pub(super) fn state(&self) -> &BodyState {
        // Only called while a body is being emitted.
        self.body_state
            .as_ref()
            .expect("body state exists while emitting a body")
    }

    /// A br_table on `id` (i32) over `targets`.
    pub(super) fn emit_dispatch(&mut self, id: Value, targets: &[ir::Block]) {
        let def = self.b.func.dfg.block_call(targets[0], &[]);
        let table: Vec<ir::BlockCall> = targets
            .iter()
            .map(|t| self.b.func.dfg.block_call(*t, &[]))
            .collect();
        let jt = self
            .b
            .create_jump_table(ir::JumpTableData::new(def, &table));
        self.b.ins().br_table(id, jt);
    }

    /// Lowers the instructions of block `bi` (phis read their accumulators).
    pub(super) fn lower_block_insts(&mut self, bi: usize) -> Result<(), CompileError> {
        self.cur_block = Some(bi);
        self.clear_hints();
        self.checkpoint_reset();
        let chunk_major = self.chunk_major_start(bi);
        self.chunk_major = chunk_major.is_some();
        let f = self.f;
        let blk = &f.blocks[bi];
        for (k, inst) in blk.insts.iter().enumerate() {
            if let (Op::Phi(_), Some(r)) = (&inst.op, inst.result) {
                let ty = self.type_of(r)?;
                let elems = self.elems(ty)?;
                let leaves = self.read_phi_acc(r);
                self.define(r, Val { leaves, elems });
                continue;
            }
            self.lower_inst(bi, k, inst).map_err(|mut e| {
                if !e.message.contains(" in kernel ") {
                    e.message = format!("{} in kernel {}", e.message, f.name);
                }
                e
            })?;
            self.checkpoint_after(bi, k, inst.result);
        }
        if let Some(start) = chunk_major {
            self.chunk_major = false;
            self.chunk_major_finish(bi, start);
        }
        // The back-edge of a loop that may wait for another sub-group: yield.
        if self.regions.yields.contains(&(bi, blk.insts.len())) {
            self.yield_split(bi, blk.insts.len())?;
        }
        Ok(())
    }

    /// Converts the result of a chunk-wise integer comparison of element `e` to a mask.
    /// Lanes are all ones or zero of `e`'s width, so 64-bit lanes narrow by taking
    /// the low halves of two chunks (one shuffle per 4 lanes) and 16- and 8-bit lanes
    /// widen by sign extension; no lane is taken apart.
    pub fn int_cmp_to_mask(&mut self, e: Elem, r: Lv) -> Vec<Value> {
        match (&r, e) {
            (Lv::U(_), _) => self.bool_mask(&r),
            (Lv::V(_), Elem::I32 | Elem::F32 | Elem::Bool) => match r {
                Lv::V(v) => v,
                _ => Vec::new(),
            },
            (Lv::V(chunks), Elem::I64 | Elem::F64) => {
                let fl = super::value::little();
                let i32s: Vec<Value> = chunks
                    .iter()
                    .map(|c| self.b.ins().bitcast(types::I32X4, fl, *c))
                    .collect();
                i32s.chunks(2)
                    .map(|p| {
                        let hi = p.get(1).copied().unwrap_or(p[0]);
                        self.shuffle32(p[0], hi, [0, 2, 4, 6])
                    })
                    .collect()
            }
            (Lv::V(chunks), Elem::I16 | Elem::F16) => {
                let n = (self.w / 4) as usize;
                let fl = super::value::little();
                let c16: Vec<Value> = chunks
                    .iter()
                    .map(|c| self.b.ins().bitcast(types::I16X8, fl, *c))
                    .collect();
                (0..n)
                    .map(|k| {
                        let c = c16[k / 2];
                        if k % 2 == 0 {
                            self.b.ins().swiden_low(c)
                        } else {
                            self.b.ins().swiden_high(c)
                        }
                    })
                    .collect()
            }
            (Lv::V(chunks), Elem::I8) => {
                let n = (self.w / 4) as usize;
                let fl = super::value::little();
                let c8: Vec<Value> = chunks
                    .iter()
                    .map(|c| self.b.ins().bitcast(types::I8X16, fl, *c))
                    .collect();
                (0..n)
                    .map(|k| {
                        // Lanes 4k..4k+3: bytes 4(k%4).. of chunk k/4.
                        let c = c8[k / 4];
                        let half = if (k % 4) < 2 {
                            self.b.ins().swiden_low(c)
                        } else {
                            self.b.ins().swiden_high(c)
                        };
                        if k % 2 == 0 {
                            self.b.ins().swiden_low(half)
                        } else {
                            self.b.ins().swiden_high(half)
                        }
                    })
                    .collect()
            }
            (Lv::A(..), _) => Vec::new(),
        }
    }

    /// i8 "every lane of the current mask is active", computed once per block.
    pub fn full_mask(&mut self) -> Value {
        if let Some(v) = self.mask_full {
            return v;
        }
        let m = self.mask.clone();
        let v = self.mask_all(&m);
        self.mask_full = Some(v);
        v
    }

    /// Emits `fast` when the current mask is full, `slow` otherwise; both produce
    /// values of types `tys`, merged.
    pub fn if_full(
        &mut self,
        tys: &[ir::Type],
        fast: impl FnOnce(&mut Self) -> Result<Vec<Value>, CompileError>,
        slow: impl FnOnce(&mut Self) -> Result<Vec<Value>, CompileError>,
    ) -> Result<Vec<Value>, CompileError> {
        match self.full_state {
            Some(true) => return fast(self),
            Some(false) => return slow(self),
            None => {}
        }
        let full = self.full_mask();
        let bf = self.b.create_block();
        let bs = self.b.create_block();
        let join = self.b.create_block();
        for t in tys {
            self.b.append_block_param(join, *t);
        }
        self.b.ins().brif(full, bf, &[], bs, &[]);
        self.b.switch_to_block(bf);
        let vf = fast(self)?;
        let args: Vec<ir::BlockArg> = vf.iter().map(|v| ir::BlockArg::Value(*v)).collect();
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(bs);
        let vs = slow(self)?;
        let args: Vec<ir::BlockArg> = vs.iter().map(|v| ir::BlockArg::Value(*v)).collect();
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(join);
        Ok(self.b.block_params(join).to_vec())
    }

    /// A zero of scalar type `t`.
    pub fn zero_scalar(&mut self, t: ir::Type) -> Value {
        if t == types::F32 {
            self.b.ins().f32const(0.0)
        } else if t == types::F64 {
            self.b.ins().f64const(0.0)
        } else if t.is_vector() {
            self.vconst_bytes(t, vec![0; 16])
        } else {
            self.b.ins().iconst(t, 0)
        }
    }
}

/// One phi fed along one CFG edge.
pub(super) struct EdgePhiInput {
    pub phi: Id,
    /// The incoming value's id.
    pub from: Id,
    pub val: Val,
    /// The phi's accumulator variables.
    pub accs: Vec<PhiAcc>,
}

/// The internal error of a uniform phi fed a varying value (the uniformity analysis and
/// the lowering disagree).
pub(super) fn uniform_phi_gets_varying(phi: Id, value: Id) -> CompileError {
    CompileError::codegen(format!(
        "internal: uniform phi %{phi} receives a varying value %{value}"
    ))
}
