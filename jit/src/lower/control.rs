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

use cranelift_codegen::ir::{self, condcodes::IntCC, types, InstBuilder, Value};
use cranelift_frontend::Variable;

use super::value::{Elem, Lv, Val};
use super::{Slot, Tr};
use crate::spirv::{Id, Op, Terminator};
use crate::CompileError;

/// Accumulator of a phi: one variable per leaf (uniform) or per chunk (varying).
#[derive(Clone, Debug)]
pub(crate) enum PhiAcc {
    U(Variable, ir::Type),
    V(Vec<Variable>, ir::Type),
    /// Affine phi (uniform bodies only): the base, with a known stride.
    A(Variable, i64, ir::Type),
}

/// State of the linearised body being emitted.
pub(crate) struct BodyState {
    /// Cranelift block of each SPIR-V block (by block index).
    pub blocks: Vec<Option<ir::Block>>,
    /// Pending mask of each block (W/4 i32x4 variables).
    pub masks: Vec<Vec<Variable>>,
    /// Phi accumulators.
    pub phis: std::collections::HashMap<Id, Vec<PhiAcc>>,
    /// Position of each block in the linear order.
    pub pos: Vec<usize>,
    /// Values defined in a loop that lanes leave in different iterations and used
    /// after it: id -> (loop, one accumulator per leaf chunk, element types). Loop
    /// exits write each leaving lane's value; uses outside the loop read it.
    pub liveout: std::collections::HashMap<Id, LiveOut>,
}

/// A loop live-out accumulator: (loop, per-leaf chunk variables, leaf element types).
pub(crate) type LiveOut = (usize, Vec<Vec<Variable>>, std::rc::Rc<Vec<Elem>>);

impl Tr<'_, '_> {
    /// Emits the kernel body for the current sub-group, continuing at `exit` when all
    /// lanes are done. `resume` holds the barrier resume blocks to dispatch to, if any.
    pub fn emit_body(
        &mut self,
        resume: Option<Value>,
        exit: ir::Block,
    ) -> Result<(), CompileError> {
        if !self.uni.any_divergence() {
            return self.emit_body_uniform(resume, exit);
        }
        let order = self.cfg.order.clone();
        let n = self.f.blocks.len();
        let mut st = BodyState {
            blocks: vec![None; n],
            masks: Vec::with_capacity(n),
            phis: Default::default(),
            pos: vec![usize::MAX; n],
            liveout: Default::default(),
        };
        for (i, &b) in order.iter().enumerate() {
            st.blocks[b] = Some(self.b.create_block());
            st.pos[b] = i;
        }
        let nm = (self.w / 4) as usize;
        let zero = self.vconst_bytes(types::I32X4, vec![0; 16]);
        let entry_mask = self
            .sgenv
            .as_ref()
            .map(|s| s.mask.clone())
            .ok_or_else(|| CompileError::codegen("sub-group env missing"))?;
        for b in 0..n {
            let vars: Vec<Variable> = (0..nm).map(|_| self.b.declare_var(types::I32X4)).collect();
            for (c, v) in vars.iter().enumerate() {
                let init = if b == 0 { entry_mask[c] } else { zero };
                self.b.def_var(*v, init);
            }
            st.masks.push(vars);
        }
        // Phi accumulators.
        for blk in &self.f.blocks {
            for inst in &blk.insts {
                if let (Op::Phi(_), Some(r), Some(ty)) = (&inst.op, inst.result, inst.ty) {
                    let elems = self.elems(ty)?;
                    let accs = self.new_phi_acc(r, &elems);
                    st.phis.insert(r, accs);
                }
            }
        }
        let phis = st.phis.clone();
        self.init_phi_accumulators(&phis);
        st.liveout = self.liveout_accumulators()?;
        // Loops ending at each position, innermost first.
        let mut loop_ends: Vec<Vec<usize>> = vec![Vec::new(); order.len()];
        let mut loops: Vec<usize> = (0..self.cfg.loops.len()).collect();
        loops.sort_by_key(|&l| self.cfg.loops[l].size);
        for l in loops {
            loop_ends[self.cfg.loops[l].span.1].push(l);
        }
        let first = st.blocks[order[0]].ok_or_else(|| CompileError::codegen("no entry block"))?;
        match resume {
            Some(id) => {
                // Dispatch: 0 = start, k = after barrier k.
                let targets = self.new_resume_blocks();
                let mut all = vec![first];
                all.extend(targets);
                self.emit_dispatch(id, &all);
            }
            None => {
                self.b.ins().jump(first, &[]);
            }
        }
        self.body_state = Some(st);
        for (i, &bi) in order.iter().enumerate() {
            let cb =
                self.state().blocks[bi].ok_or_else(|| CompileError::codegen("block missing"))?;
            self.b.switch_to_block(cb);
            let after = self.b.create_block();
            let mvars = self.state().masks[bi].clone();
            let m: Vec<Value> = mvars.iter().map(|v| self.b.use_var(*v)).collect();
            if i != 0 {
                let any = self.mask_any(&m);
                let run = self.b.create_block();
                self.b.ins().brif(any, run, &[], after, &[]);
                self.b.switch_to_block(run);
            }
            for v in &mvars {
                self.b.def_var(*v, zero);
            }
            self.mask = m.clone();
            self.mask_full = None;
            if self.duplicate_for_full_mask(bi) {
                // Two copies: one assuming every lane is active (vector accesses, no
                // guards), one for partial masks; both write the same variables.
                let full = self.mask_all(&m);
                let bf = self.b.create_block();
                let bs = self.b.create_block();
                self.b.ins().brif(full, bf, &[], bs, &[]);
                self.b.switch_to_block(bf);
                self.full_state = Some(true);
                self.mask_full = Some(full);
                self.dup_defs = Some(Default::default());
                self.lower_block(bi)?;
                self.b.ins().jump(after, &[]);
                self.b.switch_to_block(bs);
                self.mask = m;
                self.full_state = Some(false);
                self.mask_full = Some(full);
                self.dup_second = true;
                let r = self.lower_block(bi);
                self.dup_second = false;
                self.dup_defs = None;
                self.full_state = None;
                r?;
            } else {
                self.lower_block(bi)?;
            }
            self.b.ins().jump(after, &[]);
            self.b.switch_to_block(after);
            for &l in &loop_ends[i] {
                let h = self.cfg.loops[l].header;
                let hvars = self.state().masks[h].clone();
                let hm: Vec<Value> = hvars.iter().map(|v| self.b.use_var(*v)).collect();
                let any = self.mask_any(&hm);
                let hb = self.state().blocks[h]
                    .ok_or_else(|| CompileError::codegen("loop header missing"))?;
                let cont = self.b.create_block();
                self.b.ins().brif(any, hb, &[], cont, &[]);
                self.b.switch_to_block(cont);
            }
            let next = match order.get(i + 1) {
                Some(&nb) => {
                    self.state().blocks[nb].ok_or_else(|| CompileError::codegen("block missing"))?
                }
                None => exit,
            };
            self.b.ins().jump(next, &[]);
        }
        self.body_state = None;
        Ok(())
    }

    /// Live-out accumulators of loops (masked bodies): for each non-phi value defined in
    /// loop L (its innermost) and used outside L, a zero-initialised varying copy.
    fn liveout_accumulators(
        &mut self,
    ) -> Result<std::collections::HashMap<Id, LiveOut>, CompileError> {
        let mut out = std::collections::HashMap::new();
        let ids: Vec<Id> = self.regions.uses.defined_ids().collect();
        for id in ids {
            let Some((db, _)) = self.regions.uses.def_of(id) else {
                continue;
            };
            let Some(l) = self.cfg.loop_of[db] else {
                continue;
            };
            // Any use in a block outside the loop (phi operands on exit edges read
            // the accumulator too: they are copied at the end of a block outside).
            let outside = self
                .regions
                .uses
                .uses_of(id)
                .iter()
                .any(|&(ub, _)| !self.cfg.in_loop(l, ub));
            if !outside {
                continue;
            }
            let ty = self.type_of(id)?;
            let elems = self.elems(ty)?;
            let mut accs = Vec::new();
            for e in elems.iter() {
                let (cty, _) = e.chunk();
                let z = self.zero_scalar(cty);
                let vars: Vec<Variable> = (0..self.nchunks(*e))
                    .map(|_| {
                        let v = self.b.declare_var(cty);
                        self.b.def_var(v, z);
                        v
                    })
                    .collect();
                accs.push(vars);
            }
            out.insert(id, (l, accs, elems));
        }
        Ok(out)
    }

    /// Gives every phi accumulator a (zero) value at the start of the body, so that no
    /// value flows around the sub-group loop through them.
    fn init_phi_accumulators(&mut self, phis: &std::collections::HashMap<Id, Vec<PhiAcc>>) {
        for accs in phis.values() {
            for a in accs {
                match a {
                    PhiAcc::U(v, t) | PhiAcc::A(v, _, t) => {
                        let z = self.zero_scalar(*t);
                        self.b.def_var(*v, z);
                    }
                    PhiAcc::V(vs, t) => {
                        let z = self.zero_scalar(*t);
                        for v in vs {
                            self.b.def_var(*v, z);
                        }
                    }
                }
            }
        }
    }

    /// Declares the accumulator of phi `r`: affine (contiguous layout, when the
    /// analysis allows), varying or uniform.
    fn new_phi_acc(&mut self, r: Id, elems: &[Elem]) -> Vec<PhiAcc> {
        let varying = self.uni.is_varying(r);
        let contiguous = self.sgenv.as_ref().is_some_and(|s| s.row.is_some());
        let affine = match self.shapes.get(&r) {
            Some(crate::analysis::affine::Shape::Affine(s))
                if contiguous && self.affine_phis && elems.len() == 1 && elems[0].is_int() =>
            {
                Some(*s)
            }
            _ => None,
        };
        elems
            .iter()
            .map(|e| {
                if let Some(s) = affine {
                    PhiAcc::A(self.b.declare_var(e.scalar()), s, e.scalar())
                } else if varying {
                    let (cty, _) = e.chunk();
                    PhiAcc::V(
                        (0..self.nchunks(*e))
                            .map(|_| self.b.declare_var(cty))
                            .collect(),
                        cty,
                    )
                } else {
                    PhiAcc::U(self.b.declare_var(e.scalar()), e.scalar())
                }
            })
            .collect()
    }

    /// Declares the phi accumulators of the function.
    fn phi_accumulators(
        &mut self,
    ) -> Result<std::collections::HashMap<Id, Vec<PhiAcc>>, CompileError> {
        let mut phis = std::collections::HashMap::new();
        for blk in &self.f.blocks {
            for inst in &blk.insts {
                if let (Op::Phi(_), Some(r), Some(ty)) = (&inst.op, inst.result, inst.ty) {
                    let elems = self.elems(ty)?;
                    let accs = self.new_phi_acc(r, &elems);
                    phis.insert(r, accs);
                }
            }
        }
        Ok(phis)
    }

    /// The body of a kernel without divergent branches: real branches, one mask (the
    /// sub-group's) everywhere. Without barriers the body is emitted twice, for a
    /// full and for a partial sub-group.
    fn emit_body_uniform(
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
        let phis = self.phi_accumulators()?;
        self.init_phi_accumulators(&phis);
        self.body_state = Some(BodyState {
            blocks: vec![None; n],
            masks: Vec::new(),
            phis,
            pos: vec![usize::MAX; n],
            liveout: Default::default(),
        });
        let copies: Vec<Option<bool>> = if self.allow_dup {
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
            let full = self.mask_all(&entry_mask);
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
                        self.b.ins().brif(cv, et, &[], ef, &[]);
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

    /// Fresh resume blocks, one per barrier point, installed in the barrier context.
    fn new_resume_blocks(&mut self) -> Vec<ir::Block> {
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
                    PhiAcc::U(var, _) => {
                        let Lv::U(x) = lv else {
                            return Err(uniform_phi_gets_varying(r, v));
                        };
                        self.b.def_var(*var, *x);
                    }
                    PhiAcc::V(vars, _) => {
                        let ch = self.chunks_of(*e, lv);
                        for (var, c) in vars.iter().zip(ch) {
                            self.b.def_var(*var, c);
                        }
                    }
                    PhiAcc::A(var, s, _) => match lv {
                        Lv::A(x, t) if t == s => self.b.def_var(*var, *x),
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
    fn edge_phi_inputs(
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

    fn state(&self) -> &BodyState {
        // Only called while a body is being emitted.
        self.body_state
            .as_ref()
            .expect("body state exists while emitting a body")
    }

    /// A br_table on `id` (i32) over `targets`.
    fn emit_dispatch(&mut self, id: Value, targets: &[ir::Block]) {
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

    /// Lowers the instructions and terminator of block `bi` under `self.mask`.
    fn lower_block(&mut self, bi: usize) -> Result<(), CompileError> {
        self.lower_block_insts(bi)?;
        self.lower_masked_terminator(bi)
    }

    /// Lowers the instructions of block `bi` (phis read their accumulators).
    fn lower_block_insts(&mut self, bi: usize) -> Result<(), CompileError> {
        self.cur_block = Some(bi);
        self.clear_hints();
        let f = self.f;
        let blk = &f.blocks[bi];
        for (k, inst) in blk.insts.iter().enumerate() {
            if let (Op::Phi(_), Some(r)) = (&inst.op, inst.result) {
                let accs = self.state().phis.get(&r).cloned().unwrap_or_default();
                let ty = self.type_of(r)?;
                let elems = self.elems(ty)?;
                let leaves = accs
                    .iter()
                    .map(|a| match a {
                        PhiAcc::U(v, _) => Lv::U(self.b.use_var(*v)),
                        PhiAcc::V(vs, _) => Lv::V(vs.iter().map(|v| self.b.use_var(*v)).collect()),
                        PhiAcc::A(v, s, _) => Lv::A(self.b.use_var(*v), *s),
                    })
                    .collect();
                self.define(r, Val { leaves, elems });
                continue;
            }
            self.lower_inst(bi, k, inst).map_err(|mut e| {
                if !e.message.contains(" in kernel ") {
                    e.message = format!("{} in kernel {}", e.message, f.name);
                }
                e
            })?;
        }
        Ok(())
    }

    /// The terminator of block `bi` in the masked model.
    fn lower_masked_terminator(&mut self, bi: usize) -> Result<(), CompileError> {
        let blk = &self.f.blocks[bi];
        let m = self.mask.clone();
        match &blk.term {
            Terminator::Branch(t) => self.edge(bi, *t, &m)?,
            Terminator::BranchCond { cond, t, f: fl } => {
                if t == fl {
                    self.edge(bi, *t, &m)?;
                } else {
                    let c = self.get(*cond)?;
                    let cm = self.bool_mask(&c.leaves[0]);
                    let mt = self.mask_and(&m, &cm);
                    let mf = self.mask_and_not(&m, &cm);
                    self.edge(bi, *t, &mt)?;
                    self.edge(bi, *fl, &mf)?;
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
                    self.edge(bi, *t, &em)?;
                }
                let dm = self.mask_and_not(&m, &taken);
                self.edge(bi, *default, &dm)?;
            }
            Terminator::Return | Terminator::ReturnValue(_) | Terminator::Unreachable => {}
        }
        Ok(())
    }

    /// Converts the result of a chunk-wise integer comparison of element `e` to a mask.
    pub fn int_cmp_to_mask(&mut self, e: Elem, r: Lv) -> Vec<Value> {
        match (&r, e) {
            (Lv::U(_), _) => self.bool_mask(&r),
            (Lv::V(_), Elem::I32 | Elem::F32 | Elem::Bool) => match r {
                Lv::V(v) => v,
                _ => Vec::new(),
            },
            (Lv::V(chunks), _) => {
                // Lanes are all-ones/zero of e's width: test each lane.
                let (_, lpc) = e.chunk();
                let lanes: Vec<Value> = (0..self.w as usize)
                    .map(|l| {
                        let x = self
                            .b
                            .ins()
                            .extractlane(chunks[l / lpc as usize], (l % lpc as usize) as u8);
                        self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0)
                    })
                    .collect();
                match self.pack_lanes(Elem::Bool, &lanes) {
                    Lv::V(v) => v,
                    _ => Vec::new(),
                }
            }
            (Lv::A(..), _) => Vec::new(),
        }
    }

    /// Control leaving block `from` for `to` under mask `em`: pending mask and phis.
    fn edge(&mut self, from: usize, to: Id, em: &[Value]) -> Result<(), CompileError> {
        let ti = *self
            .cfg
            .index
            .get(&to)
            .ok_or_else(|| CompileError::malformed(format!("branch to unknown block %{to}")))?;
        let mvars = self.state().masks[ti].clone();
        for (c, v) in mvars.iter().enumerate() {
            let old = self.b.use_var(*v);
            let new = self.b.ins().bor(old, em[c]);
            self.b.def_var(*v, new);
        }
        // Lanes leaving loops keep their own values of the loop's live-outs.
        let leaving: Vec<(Id, Vec<Vec<Variable>>)> = self
            .state()
            .liveout
            .iter()
            .filter(|(_, (l, _, _))| self.cfg.in_loop(*l, from) && !self.cfg.in_loop(*l, ti))
            .map(|(id, (_, accs, _))| (*id, accs.clone()))
            .collect();
        for (id, accs) in leaving {
            let v = self.get_direct(id)?;
            for ((lv, e), vars) in v.leaves.iter().zip(v.elems.iter()).zip(&accs) {
                let olds: Vec<Value> = vars.iter().map(|x| self.b.use_var(*x)).collect();
                if let Lv::V(ch) = self.select_vec(*e, em, lv, &Lv::V(olds)) {
                    for (var, c) in vars.iter().zip(ch) {
                        self.b.def_var(*var, c);
                    }
                }
            }
        }
        // "Any lane takes this edge", computed once and only if a scalar phi needs it.
        let mut any: Option<Value> = None;
        for EdgePhiInput {
            phi: r,
            from: v,
            val,
            accs,
        } in self.edge_phi_inputs(from, ti)?
        {
            for ((acc, lv), e) in accs.iter().zip(&val.leaves).zip(val.elems.iter()) {
                // A uniform phi, or an affine header phi (every lane taking this (only)
                // back edge or entry is in the same iteration, so the base is shared):
                // one scalar, replaced when any lane takes the edge.
                let scalar = match (acc, lv) {
                    (PhiAcc::U(var, _), Lv::U(x)) => Some((*var, *x)),
                    (PhiAcc::U(..), _) => return Err(uniform_phi_gets_varying(r, v)),
                    (PhiAcc::A(var, s, _), Lv::A(x, t)) if t == s => Some((*var, *x)),
                    (PhiAcc::A(..), _) => {
                        self.shape_conflict = true;
                        None
                    }
                    (PhiAcc::V(vars, _), _) => {
                        let olds: Vec<Value> = vars.iter().map(|v| self.b.use_var(*v)).collect();
                        let new = self.select_vec(*e, em, lv, &Lv::V(olds));
                        if let Lv::V(chunks) = new {
                            for (var, c) in vars.iter().zip(chunks) {
                                self.b.def_var(*var, c);
                            }
                        }
                        None
                    }
                };
                if let Some((var, x)) = scalar {
                    let a = match any {
                        Some(a) => a,
                        None => *any.insert(self.mask_any(em)),
                    };
                    let old = self.b.use_var(var);
                    let new = self.b.ins().select(a, x, old);
                    self.b.def_var(var, new);
                }
            }
        }
        Ok(())
    }

    /// Whether block `bi` is worth emitting twice (full mask / partial mask): it
    /// accesses memory and holds no barrier.
    fn duplicate_for_full_mask(&self, bi: usize) -> bool {
        if !self.allow_dup {
            return false;
        }
        if self.regions.points.iter().any(|(b, _)| *b == bi)
            || self.regions.scans.iter().any(|(b, _)| *b == bi)
        {
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

    /// Mask variables of every block and every phi accumulator (barrier save/restore).
    pub(crate) fn body_state_vars(&self, at: usize) -> (Vec<Variable>, Vec<(Variable, ir::Type)>) {
        let mut masks = Vec::new();
        let mut phis = Vec::new();
        // Blocks whose pending mask or phis may still be read after a point in block
        // `at`: later in the linear order, or in a loop around `at` (back edges).
        let n = self.f.blocks.len();
        let mut pos = vec![usize::MAX; n];
        for (i, b) in self.cfg.order.iter().enumerate() {
            pos[*b] = i;
        }
        let loops: Vec<usize> = (0..self.cfg.loops.len())
            .filter(|&l| self.cfg.in_loop(l, at))
            .collect();
        let pending = |b: usize| -> bool {
            pos[b] != usize::MAX
                && (pos[b] > pos[at] || loops.iter().any(|&l| self.cfg.in_loop(l, b)))
        };
        if let Some(st) = &self.body_state {
            for (b, m) in st.masks.iter().enumerate() {
                if pending(b) {
                    masks.extend(m.iter().copied());
                }
            }
            for (_, accs, elems) in st.liveout.values() {
                for (vars, e) in accs.iter().zip(elems.iter()) {
                    let t = e.chunk().0;
                    phis.extend(vars.iter().map(|v| (*v, t)));
                }
            }
            for (b, blk) in self.f.blocks.iter().enumerate() {
                if !pending(b) {
                    continue;
                }
                for inst in &blk.insts {
                    let (Op::Phi(_), Some(id)) = (&inst.op, inst.result) else {
                        continue;
                    };
                    for a in st.phis.get(&id).map(Vec::as_slice).unwrap_or(&[]) {
                        match a {
                            PhiAcc::U(v, t) | PhiAcc::A(v, _, t) => phis.push((*v, *t)),
                            PhiAcc::V(vs, t) => phis.extend(vs.iter().map(|v| (*v, *t))),
                        }
                    }
                }
            }
        }
        (masks, phis)
    }

    /// Ids that currently have a value.
    pub(crate) fn defined_id_list(&self) -> Vec<Id> {
        self.vals.keys().copied().collect()
    }

    /// Reads the slots of `id` as raw variables (for barrier save/restore).
    pub(crate) fn slots_of(&self, id: Id) -> Option<Vec<Slot>> {
        self.vals.get(&id).cloned()
    }
}

/// One phi fed along one CFG edge.
struct EdgePhiInput {
    phi: Id,
    /// The incoming value's id.
    from: Id,
    val: Val,
    /// The phi's accumulator variables.
    accs: Vec<PhiAcc>,
}

/// The internal error of a uniform phi fed a varying value (the uniformity analysis and
/// the lowering disagree).
fn uniform_phi_gets_varying(phi: Id, value: Id) -> CompileError {
    CompileError::codegen(format!(
        "internal: uniform phi %{phi} receives a varying value %{value}"
    ))
}
