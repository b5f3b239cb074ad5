//! Chunk-major order for straight-line blocks that carry many varying accumulators.
//!
//! A varying value of a W-lane sub-group is W/4 chunks of 128 bits, and every
//! instruction is lowered for all its chunks at once. A block that updates many
//! varying accumulators, such as an unrolled sub-group GEMM step (`acc` a `float8` per
//! lane at W = 16: 32 chunk vectors), then keeps every chunk of every accumulator
//! live at once: far more than x86's 16 vector registers, so each multiply-add
//! reloads and stores its accumulator. Most of such a block is lane-local: chunk c of
//! a result depends only on chunk c of its operands. Emitted chunk by chunk (first
//! whatever is shared by all chunks, such as a broadcast, then all of chunk 0, then
//! all of chunk 1, ...), only one chunk's accumulators are live at a time.
//!
//! The block is lowered as usual into one Cranelift block, then its instructions are
//! sorted: every instruction takes the chunk (*color*) of the SPIR-V value it
//! computes, or of its users; an instruction used by several colors, mixing colors,
//! or needed by such an instruction is shared and goes first. Each color ends in a
//! jump passing its results on (as `schedule.rs` does), so that Cranelift's mid-end,
//! which places pure instructions at their first use, keeps them in that color.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::{self, InstBuilder, Value};

use super::storage::Stored;
use super::value::{Elem, Lv};
use super::Tr;
use crate::analysis::liveness::AT_END;
use crate::spirv::{Id, Op};

/// Lanes per color: the lanes of one 32-bit chunk.
const LANES_PER_COLOR: u32 = 4;

/// Varying floating-point components a block must pass on to later blocks (its
/// accumulators) to be emitted chunk by chunk: with fewer, chunk-major order only
/// trades the chunks' independent chains for one long one.
const MIN_LIVE_OUT_COMPONENTS: usize = 8;

/// Vector instructions of one color between two jumps (as `schedule.rs`): without
/// them the mid-end would compute each accumulator's whole chain at once, keeping
/// every loaded operand of the color live.
const INSTS_PER_JUMP: usize = 16;

/// Instructions a block needs to be worth the reordering.
const MIN_INSTS: usize = 32;

/// Where a block's chunk-major emission started.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Start {
    /// The Cranelift block current when the SPIR-V block's lowering began.
    block: ir::Block,
    /// The last instruction of `block` before the SPIR-V block's code.
    after: Option<ir::Inst>,
}

/// What an instruction of the block belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    /// Not decided yet (an instruction inside one SPIR-V operation's lowering).
    Unset,
    /// Belongs to the lanes `4 c .. 4 c + 3`: emitted in that color's part.
    Color(u32),
    /// Needed by several colors, or reading several: emitted first.
    Shared,
}

impl Tr<'_, '_> {
    /// Whether SPIR-V block `bi` is emitted chunk by chunk: a sub-group of several
    /// chunks, a big block without side effects other than loads, and many varying
    /// floating-point components live after it.
    pub(super) fn chunk_major_start(&mut self, bi: usize) -> Option<Start> {
        if self.huge || self.w <= LANES_PER_COLOR {
            return None;
        }
        let f = self.f;
        let blk = &f.blocks[bi];
        if blk.insts.len() < MIN_INSTS
            || self.regions.yields.contains(&(bi, blk.insts.len()))
            || (0..=blk.insts.len()).any(|k| self.regions.points.contains(&(bi, k)))
        {
            return None;
        }
        let mut live_out = 0usize;
        for inst in &blk.insts {
            if !reads_only(&inst.op) {
                return None;
            }
            let Some(r) = inst.result else { continue };
            if matches!(inst.op, Op::Phi(_)) || !self.uni.is_varying(r) {
                continue;
            }
            let used_later = self.used_after_block(r, bi);
            if !used_later {
                continue;
            }
            let Ok(ty) = self.type_of(r) else { continue };
            if let Ok(elems) = self.elems(ty) {
                live_out += elems
                    .iter()
                    .filter(|e| matches!(e, Elem::F32 | Elem::F64))
                    .count();
            }
        }
        if live_out < MIN_LIVE_OUT_COMPONENTS {
            return None;
        }
        let block = self.b.current_block()?;
        Some(Start {
            block,
            after: self.b.func.layout.last_inst(block),
        })
    }

    /// Sorts the instructions SPIR-V block `bi` emitted since `start` by color and
    /// ends each color with a jump passing its results; leaves them as they are when
    /// the lowering made new blocks or emitted anything with side effects other than
    /// loads.
    pub(super) fn chunk_major_finish(&mut self, bi: usize, start: Start) {
        // The lowering may have made blocks (a block read's full and partial
        // sub-group paths): only the last one, where the arithmetic after the loads
        // usually is, is sorted.
        let Some(block) = self.b.current_block() else {
            return;
        };
        let layout = &self.b.func.layout;
        let mut insts = Vec::new();
        let mut next = match start.after {
            Some(i) if block == start.block => layout.next_inst(i),
            _ => layout.first_inst(block),
        };
        while let Some(i) = next {
            insts.push(i);
            next = layout.next_inst(i);
        }
        let dfg = &self.b.func.dfg;
        if insts.iter().any(|&i| {
            let op = dfg.insts[i].opcode();
            op.is_terminator()
                || op.is_call()
                || op.can_store()
                || op.other_side_effects()
                || (op.can_trap() && !op.can_load())
        }) {
            return;
        }
        let index: HashMap<ir::Inst, usize> =
            insts.iter().enumerate().map(|(k, &i)| (i, k)).collect();
        let def_index = |v: Value| dfg.value_def(v).inst().and_then(|i| index.get(&i).copied());

        // Seeds: chunk c of a varying SPIR-V value of this block has the color of
        // its lanes (a chunk of more than one color's lanes is shared).
        let mut class = vec![Class::Unset; insts.len()];
        // Chunk values of this block's SPIR-V values used after it: passed on by the
        // jumps that end their colors.
        let mut outputs: HashSet<Value> = HashSet::new();
        let f = self.f;
        for inst in &f.blocks[bi].insts {
            let Some(r) = inst.result else { continue };
            let Some(Stored::Direct(leaves)) = self.vals.get(&r) else {
                continue;
            };
            let used_later = self.used_after_block(r, bi);
            for leaf in leaves {
                let Lv::V(chunks) = leaf else { continue };
                for (c, &v) in chunks.iter().enumerate() {
                    let Some(k) = def_index(v) else { continue };
                    let lanes = dfg.value_type(v).lane_count();
                    let new = if lanes <= LANES_PER_COLOR {
                        Class::Color(c as u32 * lanes / LANES_PER_COLOR)
                    } else {
                        Class::Shared
                    };
                    class[k] = match class[k] {
                        Class::Unset => new,
                        old if old == new => old,
                        _ => Class::Shared,
                    };
                    if matches!(new, Class::Color(_)) && used_later {
                        outputs.insert(v);
                    }
                }
            }
        }
        let operands =
            |k: usize| -> Vec<usize> { dfg.inst_values(insts[k]).filter_map(def_index).collect() };
        let mut users: Vec<Vec<usize>> = vec![Vec::new(); insts.len()];
        for k in 0..insts.len() {
            for d in operands(k) {
                users[d].push(k);
            }
        }
        // Unseeded instructions take their users' one color (users come later).
        for k in (0..insts.len()).rev() {
            if class[k] != Class::Unset {
                continue;
            }
            let mut color = None;
            let mut shared = users[k].is_empty();
            for &u in &users[k] {
                match (class[u], color) {
                    (Class::Color(c), None) => color = Some(c),
                    (Class::Color(c), Some(d)) if c == d => {}
                    _ => shared = true,
                }
            }
            class[k] = match color {
                Some(c) if !shared => Class::Color(c),
                _ => Class::Shared,
            };
        }
        // An instruction reading another color is shared, and so is everything a
        // shared instruction reads: shared code runs first.
        loop {
            let mut changed = false;
            for k in 0..insts.len() {
                if let Class::Color(c) = class[k] {
                    if operands(k)
                        .iter()
                        .any(|&d| matches!(class[d], Class::Color(e) if e != c))
                    {
                        class[k] = Class::Shared;
                        changed = true;
                    }
                }
            }
            for k in (0..insts.len()).rev() {
                if class[k] == Class::Shared {
                    for d in operands(k) {
                        if class[d] != Class::Shared {
                            class[d] = Class::Shared;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let colors = class
            .iter()
            .filter_map(|c| match c {
                Class::Color(c) => Some(*c as usize + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let used: Vec<bool> = (0..colors)
            .map(|c| class.contains(&Class::Color(c as u32)))
            .collect();
        if used.iter().filter(|u| **u).count() < 2 {
            return;
        }

        let remat = self.remat_candidates(&insts, &index, &class, &users);
        let layout = &mut self.b.func.layout;
        for &i in &insts {
            layout.remove_inst(i);
        }
        for (k, &i) in insts.iter().enumerate() {
            if class[k] == Class::Shared {
                layout.append_inst(i, block);
            }
        }
        // Each value passed through a jump is used under its parameter's name after it.
        let mut renamed: HashMap<Value, Value> = HashMap::new();
        let mut placed = vec![false; insts.len()];
        let mut copies: HashMap<(Value, usize), Value> = HashMap::new();
        let last = used.iter().rposition(|u| *u).unwrap_or(0);
        let mut here = block;
        for c in (0..colors).filter(|&c| used[c]) {
            let members: Vec<usize> = (0..insts.len())
                .filter(|&k| class[k] == Class::Color(c as u32))
                .collect();
            let mut since = 0usize;
            for (n, &k) in members.iter().enumerate() {
                // A broadcast load every color reads is loaded again in each color.
                let args: Vec<Value> = self.b.func.dfg.inst_values(insts[k]).collect();
                for v in args {
                    if let Some(&(load, splat, _)) = remat.get(&v) {
                        if let std::collections::hash_map::Entry::Vacant(e) = copies.entry((v, c)) {
                            e.insert(self.copy_splat_load(load, splat, c));
                        }
                    }
                }
                self.b.func.dfg.map_inst_values(insts[k], |v| {
                    copies
                        .get(&(v, c))
                        .or_else(|| renamed.get(&v))
                        .copied()
                        .unwrap_or(v)
                });
                self.b.func.layout.append_inst(insts[k], here);
                placed[k] = true;
                if self
                    .b
                    .func
                    .dfg
                    .inst_results(insts[k])
                    .iter()
                    .any(|&r| self.b.func.dfg.value_type(r).is_vector())
                {
                    since += 1;
                }
                let color_ends = n + 1 == members.len();
                if (color_ends && c != last) || (!color_ends && since >= INSTS_PER_JUMP) {
                    // Everything of this color still needed later (by the color's
                    // remaining code, or after the block) goes through the jump, so
                    // that the mid-end computes it before the jump.
                    let mut live: Vec<Value> = Vec::new();
                    for &d in &members[..=n] {
                        let later = users[d].iter().any(|&u| !placed[u]);
                        for &r in self.b.func.dfg.inst_results(insts[d]) {
                            if later || outputs.contains(&r) {
                                live.push(r);
                            }
                        }
                    }
                    here = self.pass_through_jump(&live, &mut renamed);
                    since = 0;
                }
            }
        }
        // A copied broadcast whose every reader now has its own copy is gone, unless
        // the scalar is a SPIR-V value used after the block (a load stays a load for
        // Cranelift even when nothing reads it).
        let escaping: HashSet<Value> = f.blocks[bi]
            .insts
            .iter()
            .filter_map(|i| i.result)
            .filter(|&r| self.used_after_block(r, bi))
            .filter_map(|r| match self.vals.get(&r) {
                Some(Stored::Direct(leaves)) => Some(leaves.clone()),
                _ => None,
            })
            .flatten()
            .filter_map(|leaf| match leaf {
                Lv::U(v) => Some(v),
                _ => None,
            })
            .collect();
        for &(load, splat, k) in remat.values() {
            let all_copied = users[k]
                .iter()
                .all(|&u| matches!(class[u], Class::Color(_)));
            let scalar = self.b.func.dfg.first_result(load);
            if all_copied && !escaping.contains(&scalar) {
                self.b.func.layout.remove_inst(splat);
                self.b.func.layout.remove_inst(load);
            }
        }
        // Later code (other blocks' uses, phi writes on the edges) reads the new names.
        for inst in &f.blocks[bi].insts {
            let Some(r) = inst.result else { continue };
            if let Some(Stored::Direct(leaves)) = self.vals.get_mut(&r) {
                for leaf in leaves.iter_mut() {
                    if let Lv::V(chunks) = leaf {
                        for v in chunks.iter_mut() {
                            if let Some(n) = renamed.get(v) {
                                *v = *n;
                            }
                        }
                    }
                }
            }
        }
    }

    /// Whether SPIR-V value `r` of block `bi` is used after the block (in another
    /// block, or by its terminator or a phi on one of its edges).
    fn used_after_block(&self, r: Id, bi: usize) -> bool {
        self.regions
            .uses
            .uses_of(r)
            .iter()
            .any(|&(ub, uk)| ub != bi || uk == AT_END)
    }

    /// The shared `splat(load x)` pairs (value of the splat -> (load, splat, the
    /// splat's position in `insts`; `index` is the inverse of `insts`)) used by
    /// colored instructions, whose load has no other use: each color loads its own
    /// copy (one `vbroadcastss` from memory) instead of keeping one broadcast live,
    /// and spilled, across all colors.
    fn remat_candidates(
        &self,
        insts: &[ir::Inst],
        index: &HashMap<ir::Inst, usize>,
        class: &[Class],
        users: &[Vec<usize>],
    ) -> HashMap<Value, (ir::Inst, ir::Inst, usize)> {
        let dfg = &self.b.func.dfg;
        let mut out = HashMap::new();
        for (k, &i) in insts.iter().enumerate() {
            let ir::InstructionData::Unary {
                opcode: ir::Opcode::Splat,
                arg,
            } = dfg.insts[i]
            else {
                continue;
            };
            let Some(l) = dfg.value_def(arg).inst() else {
                continue;
            };
            let Some(&lk) = index.get(&l) else { continue };
            let is_load = matches!(
                dfg.insts[l],
                ir::InstructionData::Load {
                    opcode: ir::Opcode::Load,
                    ..
                }
            );
            if class[k] == Class::Shared
                && is_load
                && self.movable_loads.contains(&arg)
                && users[lk] == [k]
                && !dfg.value_type(arg).is_vector()
                && users[k]
                    .iter()
                    .any(|&u| matches!(class[u], Class::Color(_)))
            {
                out.insert(dfg.first_result(i), (l, i, k));
            }
        }
        out
    }

    /// A copy of `splat(load)` for color `c`. The copy's address is written as a
    /// different expression (base + 64 (c + 1), offset - 64 (c + 1)): the mid-end's
    /// redundant-load elimination merges loads of one address expression, and would
    /// make the copies one value again.
    fn copy_splat_load(&mut self, load: ir::Inst, splat: ir::Inst, c: usize) -> Value {
        let dfg = &self.b.func.dfg;
        let data = dfg.insts[load];
        let (ir::InstructionData::Load { arg, offset, .. }, Some(flags)) =
            (data, data.memflags_data(dfg))
        else {
            return dfg.first_result(splat);
        };
        let ty = dfg.value_type(dfg.first_result(load));
        let vty = dfg.value_type(dfg.first_result(splat));
        // Movable (`Tr::movable_loads`): placed next to its use, where the splat
        // takes it as a memory operand.
        let flags = flags.with_readonly().with_can_move();
        let shift = 64 * (c as i64 + 1);
        let addr = self.b.ins().iadd_imm_s(arg, shift);
        let x = self
            .b
            .ins()
            .load(ty, flags, addr, i64::from(offset) as i32 - shift as i32);
        self.b.ins().splat(vty, x)
    }

    /// Ends the current block with a jump passing `live` (original names) to a new
    /// block ([`Tr::jump_to_new_block`]) and records their new names; returns the
    /// new block.
    fn pass_through_jump(
        &mut self,
        live: &[Value],
        renamed: &mut HashMap<Value, Value>,
    ) -> ir::Block {
        let now: Vec<Value> = live
            .iter()
            .map(|v| renamed.get(v).copied().unwrap_or(*v))
            .collect();
        let (next, params) = self.jump_to_new_block(&now);
        for (v, p) in live.iter().zip(params) {
            renamed.insert(*v, p);
        }
        next
    }
}

/// Whether SPIR-V operation `op` is lowered without side effects other than loads
/// (sub-group operations and OpenCL.std calls are checked again on the Cranelift
/// code): chunk-major order may move it.
pub(super) fn reads_only(op: &Op) -> bool {
    matches!(
        op,
        Op::Binary(..)
            | Op::Unary(..)
            | Op::Convert { .. }
            | Op::Wide(..)
            | Op::VectorTimesScalar(..)
            | Op::Undef
            | Op::Bitcast(_)
            | Op::PtrCast(_)
            | Op::Select { .. }
            | Op::Phi(_)
            | Op::Load { .. }
            | Op::AccessChain { .. }
            | Op::CompositeExtract { .. }
            | Op::CompositeInsert { .. }
            | Op::CompositeConstruct(_)
            | Op::VectorExtractDynamic { .. }
            | Op::VectorInsertDynamic { .. }
            | Op::VectorShuffle { .. }
            | Op::CopyObject(_)
            | Op::Dot(..)
            | Op::IntDot { .. }
            | Op::ExtInst { .. }
            | Op::Group { .. }
            | Op::Nop
    )
}
