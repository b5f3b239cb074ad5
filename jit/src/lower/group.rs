//! Sub-group operations as lane operations: reductions and scans over the active
//! lanes, broadcast, vote (all/any), the Intel shuffles and block reads/writes.
//! Work-group collectives go through the barrier machinery ([`super::barrier`]).

use cranelift_codegen::ir::{self, condcodes::IntCC, types, InstBuilder, Value};

use super::value::{Elem, Lv, Val};
use super::Tr;
use crate::spirv::{GroupMode, GroupOp, Id};
use crate::CompileError;

/// SPIR-V scope values.
const SCOPE_WORKGROUP: u64 = 2;
const SCOPE_SUBGROUP: u64 = 3;

impl Tr<'_, '_> {
    /// The value of a constant scope operand (0 for the Intel instructions, which have
    /// no scope: sub-group).
    pub fn scope_value(&self, scope: Id) -> Result<u64, CompileError> {
        if scope == 0 {
            return Ok(SCOPE_SUBGROUP);
        }
        match self.m.constants.get(&scope) {
            Some(crate::spirv::Constant {
                value: crate::spirv::ConstValue::Scalar(v),
                ..
            }) => Ok(*v),
            _ => Err(CompileError::unsupported("a scope that is not a constant")),
        }
    }

    /// Lowers a group instruction.
    #[allow(clippy::too_many_arguments)]
    pub fn group_op(
        &mut self,
        op: GroupOp,
        scope: Id,
        mode: Option<GroupMode>,
        args: &[Id],
        rty: Id,
        bi: usize,
        k: usize,
    ) -> Result<Val, CompileError> {
        let sc = self.scope_value(scope)?;
        if sc == SCOPE_WORKGROUP {
            return self.work_group_collective(op, mode, args, rty, bi, k);
        }
        if sc != SCOPE_SUBGROUP {
            return Err(CompileError::unsupported(format!(
                "group operation {op:?} with scope {sc}"
            )));
        }
        if matches!(op, GroupOp::Broadcast | GroupOp::Shuffle) && args.len() >= 2 {
            if let Some(v) = self.deferred_broadcast(args[0], args[1], rty)? {
                return Ok(v);
            }
        }
        let elems = self.elems(rty)?;
        let vals: Vec<Val> = args
            .iter()
            .map(|a| self.get(*a))
            .collect::<Result<_, _>>()?;
        let arg = |i: usize| -> Result<&Val, CompileError> {
            vals.get(i).ok_or_else(|| {
                CompileError::malformed(format!("group operation {op:?} needs more operands"))
            })
        };
        if let Some(v) = self.group_khr(op, mode, args, &vals, &elems)? {
            return Ok(v);
        }
        let mut leaves = Vec::with_capacity(elems.len());
        if op == GroupOp::BlockRead {
            let p = arg(0)?.leaves[0].clone();
            let ptr_ty = self.type_of(args[0])?;
            let (_, pointee) = self.m.pointee(ptr_ty)?;
            let pe = self.elems(pointee)?[0];
            let es = i64::from(pe.bytes());
            for (c, e) in elems.iter().enumerate() {
                let base = match &p {
                    Lv::U(a) => self
                        .b
                        .ins()
                        .iadd_imm_s(*a, c as i64 * es * i64::from(self.w)),
                    _ => {
                        return Err(CompileError::unsupported(
                            "sub-group block read from a varying address",
                        ))
                    }
                };
                let l = self.load_leaves(&Lv::A(base, es), &[*e], &[0], false)?;
                leaves.extend(l);
            }
            return Ok(Val { leaves, elems });
        }
        for (i, e) in elems.iter().enumerate() {
            let e = *e;
            let r = match op {
                GroupOp::All | GroupOp::Any => {
                    let v = arg(0)?.leaves[i].clone();
                    let vm = self.bool_mask(&v);
                    let m = self.mask.clone();
                    Lv::U(if op == GroupOp::Any {
                        let x = self.mask_and(&vm, &m);
                        self.mask_any(&x)
                    } else {
                        let x = self.mask_and_not(&m, &vm);
                        let any_false = self.mask_any(&x);
                        self.b.ins().bxor_imm_s(any_false, 1)
                    })
                }
                GroupOp::Elect => {
                    let first = self.first_active_lane();
                    let lane = Lv::A(self.b.ins().iconst(types::I32, 0), 1);
                    self.icmp_lv(IntCC::Equal, Elem::I32, &lane, &Lv::U(first))
                }
                GroupOp::Broadcast => {
                    let v = arg(0)?;
                    let (ve, vl) = (v.elems[i], v.leaves[i].clone());
                    let id = arg(1)?;
                    let idx = self.int_resize(&id.leaves[0], id.elems[0], Elem::I64, false);
                    match (&vl, &idx) {
                        (Lv::U(_), _) => vl,
                        (_, Lv::U(ix)) => {
                            let ix = *ix;
                            Lv::U(self.lane_dyn(ve, &vl, ix))
                        }
                        _ => self.shuffle_lanes(ve, &vl, &idx),
                    }
                }
                GroupOp::Shuffle => {
                    let v = arg(0)?;
                    let id = arg(1)?;
                    let idx = self.int_resize(&id.leaves[0], id.elems[0], Elem::I64, false);
                    let (ve, vl) = (v.elems[i], v.leaves[i].clone());
                    match (&vl, &idx) {
                        (Lv::U(_), _) => vl,
                        (_, Lv::U(ix)) => {
                            let ix = *ix;
                            Lv::U(self.lane_dyn(ve, &vl, ix))
                        }
                        _ => self.shuffle_lanes(ve, &vl, &idx),
                    }
                }
                GroupOp::ShuffleXor => {
                    let v = arg(0)?;
                    let id = arg(1)?;
                    let (ve, vl) = (v.elems[i], v.leaves[i].clone());
                    if vl.is_uniform() {
                        vl
                    } else {
                        let x = self.int_resize(&id.leaves[0], id.elems[0], Elem::I64, false);
                        let k = match &x {
                            Lv::U(v) => self.const_of(*v),
                            _ => None,
                        };
                        let w = self.w as usize;
                        let ch = self.chunks_of(ve, &vl);
                        let fast =
                            k.and_then(|k| self.static_permute(ve, &ch, |l| (l ^ k as usize) % w));
                        if let Some(r) = fast {
                            leaves.push(r);
                            continue;
                        }
                        let lane = Lv::A(self.b.ins().iconst(types::I64, 0), 1);
                        let idx = self.vec_op2(
                            Elem::I64,
                            &lane,
                            &x,
                            |t, a, b| t.b.ins().bxor(a, b),
                            |t, a, b| t.b.ins().bxor(a, b),
                        );
                        self.shuffle_lanes(ve, &vl, &idx)
                    }
                }
                GroupOp::ShuffleDown | GroupOp::ShuffleUp => {
                    // Down: (current, next, delta): lane l reads l + delta of current||next.
                    // Up: (previous, current, delta): lane l reads l - delta of previous||current.
                    let a = arg(0)?;
                    let b = arg(1)?;
                    let d = arg(2)?;
                    let (ve, al, bl) = (a.elems[i], a.leaves[i].clone(), b.leaves[i].clone());
                    let delta = self.int_resize(&d.leaves[0], d.elems[0], Elem::I64, false);
                    let w = i64::from(self.w);
                    let lane = Lv::A(self.b.ins().iconst(types::I64, 0), 1);
                    let idx = if op == GroupOp::ShuffleDown {
                        self.add_lv(Elem::I64, &lane, &delta)
                    } else {
                        let wv = self.b.ins().iconst(types::I64, w);
                        let base = self.add_uniform(Elem::I64, &lane, wv);
                        self.vec_op2(
                            Elem::I64,
                            &base,
                            &delta,
                            |t, x, y| t.b.ins().isub(x, y),
                            |t, x, y| t.b.ins().isub(x, y),
                        )
                    };
                    self.shuffle2_lanes(ve, &al, &bl, &idx)
                }
                GroupOp::IAdd
                | GroupOp::FAdd
                | GroupOp::FMin
                | GroupOp::UMin
                | GroupOp::SMin
                | GroupOp::FMax
                | GroupOp::UMax
                | GroupOp::SMax
                | GroupOp::IMul
                | GroupOp::FMul
                | GroupOp::And
                | GroupOp::Or
                | GroupOp::Xor
                | GroupOp::LogicalAnd
                | GroupOp::LogicalOr
                | GroupOp::LogicalXor => {
                    let v = arg(0)?;
                    let (ve, vl) = (v.elems[i], v.leaves[i].clone());
                    let mode = mode.unwrap_or(GroupMode::Reduce);
                    if ve == Elem::F16 {
                        // Combined in f32, rounded to half once.
                        let wide = self.half_to_f32(&vl);
                        let r = self.sub_group_reduce(op, mode, Elem::F32, &wide)?;
                        self.f32_to_half(&r)
                    } else {
                        self.sub_group_reduce(op, mode, ve, &vl)?
                    }
                }
                GroupOp::BlockRead
                | GroupOp::BroadcastFirst
                | GroupOp::AllEqual
                | GroupOp::Ballot
                | GroupOp::InverseBallot
                | GroupOp::BallotBitExtract
                | GroupOp::BallotBitCount
                | GroupOp::BallotFindLsb
                | GroupOp::BallotFindMsb
                | GroupOp::ShuffleUpKhr
                | GroupOp::ShuffleDownKhr
                | GroupOp::Rotate => {
                    return Err(CompileError::codegen(format!(
                        "internal: group operation {op:?} lowered above"
                    )))
                }
                GroupOp::BlockWrite => {
                    return Err(CompileError::codegen("internal: block write has no result"))
                }
            };
            let _ = e;
            leaves.push(r);
        }
        Ok(Val { leaves, elems })
    }

    /// `OpSubgroupBlockWriteINTEL ptr data`: lane `l` of component `c` goes to
    /// `ptr[c * W + l]`.
    pub fn group_block_write(&mut self, args: &[Id]) -> Result<(), CompileError> {
        let (Some(pid), Some(did)) = (args.first(), args.get(1)) else {
            return Err(CompileError::malformed(
                "sub-group block write needs a pointer and data",
            ));
        };
        let p = self.get(*pid)?.leaves[0].clone();
        let data = self.get(*did)?;
        let es = i64::from(data.elems[0].bytes());
        for (c, (l, e)) in data.leaves.iter().zip(data.elems.iter()).enumerate() {
            let base = match &p {
                Lv::U(a) => self
                    .b
                    .ins()
                    .iadd_imm_s(*a, c as i64 * es * i64::from(self.w)),
                _ => {
                    return Err(CompileError::unsupported(
                        "sub-group block write to a varying address",
                    ))
                }
            };
            self.store_leaves(
                &Lv::A(base, es),
                std::slice::from_ref(l),
                &[*e],
                &[0],
                false,
            )?;
        }
        Ok(())
    }

    /// Index (i32) of the first active lane of the current mask.
    pub fn first_active_lane(&mut self) -> Value {
        let m = self.mask.clone();
        let all = self.mask_bits(&m);
        self.b.ins().ctz(all)
    }

    /// Spills a varying leaf to a stack buffer; returns its address.
    fn spill(&mut self, e: Elem, v: &Lv) -> Value {
        let chunks = self.chunks_of(e, v);
        let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            16 * chunks.len() as u32,
            4,
        ));
        let base = self.b.ins().stack_addr(types::I64, slot, 0);
        let fl = ir::MemFlagsData::trusted();
        for (c, ch) in chunks.iter().enumerate() {
            self.b.ins().store(fl, *ch, base, (16 * c) as i32);
        }
        base
    }

    /// Lane `idx` (uniform i64, taken modulo W) of a varying leaf, in registers: one
    /// byte shuffle per chunk brings the lane to lane 0, and the chunk holding it is
    /// selected.
    pub fn lane_dyn(&mut self, e: Elem, v: &Lv, idx: Value) -> Value {
        // A constant index (an unrolled `sub_group_broadcast(x, kk)`): one lane
        // extract, where the byte shuffle's pattern would be built at run time
        // (Cranelift does not fold vector constants).
        if let Some(k) = self.const_of(idx) {
            let lane = (k & (i64::from(self.w) - 1)) as usize;
            return self.lane_of(e, v, lane);
        }
        let chunks = self.chunks_of(e, v);
        let (ty, lpc) = e.chunk();
        let lb = 16 / lpc;
        let ix = self.b.ins().band_imm_s(idx, i64::from(self.w) - 1);
        let li = self.b.ins().band_imm_s(ix, i64::from(lpc) - 1);
        let ci = self.b.ins().ushr_imm_s(ix, i64::from(lpc.trailing_zeros()));
        // Byte j of the shuffle reads byte (li * lb + j % lb).
        let first = self.b.ins().imul_imm_s(li, i64::from(lb));
        let first = self.b.ins().ireduce(types::I8, first);
        let first = self.b.ins().splat(types::I8X16, first);
        let pattern: Vec<u8> = (0..16u32).map(|j| (j % lb) as u8).collect();
        let pattern = self.vconst_bytes(types::I8X16, pattern);
        let bytes = self.b.ins().iadd(first, pattern);
        let fl = super::value::little();
        let mut acc: Option<Value> = None;
        for (c, ch) in chunks.iter().enumerate() {
            let b = if ty == types::I8X16 {
                *ch
            } else {
                self.b.ins().bitcast(types::I8X16, fl, *ch)
            };
            let s = self.b.ins().swizzle(b, bytes);
            acc = Some(match acc {
                None => s,
                Some(a) => {
                    let here = self.b.ins().icmp_imm_s(IntCC::Equal, ci, c as i64);
                    self.b.ins().select(here, s, a)
                }
            });
        }
        let Some(r) = acc else {
            return self.zero_scalar(e.scalar());
        };
        let r = if ty == types::I8X16 {
            r
        } else {
            self.b.ins().bitcast(ty, fl, r)
        };
        let x = self.b.ins().extractlane(r, 0);
        if e == Elem::Bool {
            self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0)
        } else {
            x
        }
    }

    fn load_lane(&mut self, e: Elem, base: Value, ix: Value) -> Value {
        let lane_bytes = if e == Elem::Bool { 4 } else { e.bytes() };
        let off = self.b.ins().imul_imm_s(ix, i64::from(lane_bytes));
        let a = self.b.ins().iadd(base, off);
        let fl = ir::MemFlagsData::trusted();
        if e == Elem::Bool {
            let x = self.b.ins().load(types::I32, fl, a, 0);
            self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0)
        } else {
            self.b.ins().load(e.scalar(), fl, a, 0)
        }
    }

    /// A compile-time permutation of lanes: result lane `l` is lane `map(l)` of the
    /// concatenated `chunks`, built with one byte shuffle per result chunk (lanes past
    /// W, in a chunk W does not fill, keep their own).
    pub(super) fn static_permute(
        &mut self,
        e: Elem,
        chunks: &[Value],
        map: impl Fn(usize) -> usize,
    ) -> Option<Lv> {
        let (ty, lpc) = e.chunk();
        let lpc = lpc as usize;
        let lb = 16 / lpc;
        let w = self.w as usize;
        let mut out = Vec::new();
        for c in 0..self.nchunks(e) {
            let src: Vec<usize> = (0..lpc)
                .map(|j| {
                    let l = c * lpc + j;
                    if l < w {
                        map(l)
                    } else {
                        l
                    }
                })
                .collect();
            let mut pair: Vec<usize> = Vec::new();
            for s in &src {
                let ch = s / lpc;
                if ch >= chunks.len() {
                    return None;
                }
                if !pair.contains(&ch) {
                    pair.push(ch);
                }
            }
            if pair.len() > 2 {
                return None;
            }
            let a = chunks[pair[0]];
            let b = chunks[*pair.get(1).unwrap_or(&pair[0])];
            let mut mask = [0u8; 16];
            for (j, s) in src.iter().enumerate() {
                let which = if s / lpc == pair[0] { 0 } else { 16 };
                for k in 0..lb {
                    mask[lb * j + k] = (which + lb * (s % lpc) + k) as u8;
                }
            }
            let fl = super::value::little();
            let (ab, bb) = (
                self.b.ins().bitcast(types::I8X16, fl, a),
                self.b.ins().bitcast(types::I8X16, fl, b),
            );
            let imm = self.b.func.dfg.immediates.push(mask.to_vec().into());
            let r = self.b.ins().shuffle(ab, bb, imm);
            out.push(if ty == types::I8X16 {
                r
            } else {
                self.b.ins().bitcast(ty, fl, r)
            });
        }
        Some(Lv::V(out))
    }

    /// Lane `l` of the result reads lane `idx_l mod W` of `v`.
    pub fn shuffle_lanes(&mut self, e: Elem, v: &Lv, idx: &Lv) -> Lv {
        if let Lv::A(b, 1) = idx {
            if let Some(k) = self.const_of(*b) {
                let w = self.w as usize;
                let ch = self.chunks_of(e, v);
                if let Some(r) = self.static_permute(e, &ch, |l| l.wrapping_add(k as usize) % w) {
                    return r;
                }
            }
        }
        if let Lv::A(b, s) = idx {
            // Static permutation when the index is lane ^ c or lane + c with c constant? keep generic.
            let _ = (b, s);
        }
        let base = self.spill(e, v);
        let lanes = self.lanes_of(Elem::I64, idx);
        let mut out = Vec::with_capacity(lanes.len());
        for ix in lanes {
            let ix = self.b.ins().band_imm_s(ix, i64::from(self.w) - 1);
            out.push(self.load_lane(e, base, ix));
        }
        self.pack_lanes(e, &out)
    }

    /// Lane `l` reads lane `idx_l` of the 2W-lane concatenation `a || b`.
    fn shuffle2_lanes(&mut self, e: Elem, a: &Lv, b: &Lv, idx: &Lv) -> Lv {
        let ca = self.chunks_of(e, a);
        let cb = self.chunks_of(e, b);
        // Statically only when a's W lanes fill whole chunks (b's follow directly).
        let full_chunks = self.w >= e.chunk().1;
        if let (Lv::A(base, 1), true) = (idx, full_chunks) {
            if let Some(k) = self.const_of(*base) {
                let w2 = 2 * self.w as usize;
                let all: Vec<Value> = ca.iter().chain(cb.iter()).copied().collect();
                if let Some(r) = self.static_permute(e, &all, |l| l.wrapping_add(k as usize) % w2) {
                    return r;
                }
            }
        }
        let n = ca.len() + cb.len();
        let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            16 * n as u32,
            4,
        ));
        let base = self.b.ins().stack_addr(types::I64, slot, 0);
        let fl = ir::MemFlagsData::trusted();
        // a's lanes occupy W lanes (not whole chunks when W < lanes per chunk).
        let lane_bytes = if e == Elem::Bool { 4 } else { e.bytes() };
        for (c, ch) in ca.iter().enumerate() {
            self.b.ins().store(fl, *ch, base, (16 * c) as i32);
        }
        let b_off = (self.w * lane_bytes) as i32;
        for (c, ch) in cb.iter().enumerate() {
            self.b.ins().store(fl, *ch, base, b_off + (16 * c) as i32);
        }
        let lanes = self.lanes_of(Elem::I64, idx);
        let mut out = Vec::with_capacity(lanes.len());
        for ix in lanes {
            let ix = self.b.ins().band_imm_s(ix, 2 * i64::from(self.w) - 1);
            out.push(self.load_lane(e, base, ix));
        }
        self.pack_lanes(e, &out)
    }

    /// The identity of a reduction.
    fn identity(&mut self, op: GroupOp, e: Elem) -> Value {
        match op {
            GroupOp::IAdd
            | GroupOp::Or
            | GroupOp::Xor
            | GroupOp::LogicalOr
            | GroupOp::LogicalXor
            | GroupOp::UMax => self.scalar_const(e, 0),
            GroupOp::FAdd => {
                if e == Elem::F64 {
                    self.b.ins().f64const(-0.0)
                } else {
                    self.b.ins().f32const(-0.0)
                }
            }
            GroupOp::IMul => self.scalar_const(e, 1),
            GroupOp::FMul => {
                if e == Elem::F64 {
                    self.b.ins().f64const(1.0)
                } else {
                    self.b.ins().f32const(1.0)
                }
            }
            GroupOp::And | GroupOp::UMin => self.scalar_const(e, u64::MAX),
            GroupOp::LogicalAnd => self.scalar_const(e, 1),
            GroupOp::SMin => self.scalar_const(e, (i64::MAX >> (64 - e.bits())) as u64),
            GroupOp::SMax => self.scalar_const(e, (i64::MIN >> (64 - e.bits())) as u64),
            GroupOp::FMin => {
                if e == Elem::F64 {
                    self.b.ins().f64const(f64::INFINITY)
                } else {
                    self.b.ins().f32const(f32::INFINITY)
                }
            }
            _ => {
                if e == Elem::F64 {
                    self.b.ins().f64const(f64::NEG_INFINITY)
                } else {
                    self.b.ins().f32const(f32::NEG_INFINITY)
                }
            }
        }
    }

    /// Scalar combine of a reduction.
    pub fn combine(&mut self, op: GroupOp, x: Value, y: Value) -> Value {
        let ins = self.b.ins();
        match op {
            GroupOp::IAdd => ins.iadd(x, y),
            GroupOp::FAdd => ins.fadd(x, y),
            GroupOp::IMul => ins.imul(x, y),
            GroupOp::FMul => ins.fmul(x, y),
            GroupOp::UMin => ins.umin(x, y),
            GroupOp::SMin => ins.smin(x, y),
            GroupOp::UMax => ins.umax(x, y),
            GroupOp::SMax => ins.smax(x, y),
            GroupOp::FMin => ins.fmin(x, y),
            GroupOp::FMax => ins.fmax(x, y),
            GroupOp::And | GroupOp::LogicalAnd => ins.band(x, y),
            GroupOp::Or | GroupOp::LogicalOr => ins.bor(x, y),
            _ => ins.bxor(x, y),
        }
    }

    /// This sub-group's reduction of `v` (uniform).
    pub fn group_partial(&mut self, op: GroupOp, e: Elem, v: &Lv) -> Result<Lv, CompileError> {
        self.sub_group_reduce(op, GroupMode::Reduce, e, v)
    }

    /// This sub-group's scan of `v`.
    pub fn group_scan(
        &mut self,
        op: GroupOp,
        mode: GroupMode,
        e: Elem,
        v: &Lv,
    ) -> Result<Lv, CompileError> {
        self.sub_group_reduce(op, mode, e, v)
    }

    /// The identity of reduction `op` on `e`.
    pub fn group_identity(&mut self, op: GroupOp, e: Elem) -> Value {
        self.identity(op, e)
    }

    /// Reduce or scan of `v` over the active lanes.
    fn sub_group_reduce(
        &mut self,
        op: GroupOp,
        mode: GroupMode,
        e: Elem,
        v: &Lv,
    ) -> Result<Lv, CompileError> {
        let m = self.mask.clone();
        let id = self.identity(op, e);
        let lanes = self.lanes_of(e, v);
        let act: Vec<Value> = (0..self.w as usize)
            .map(|l| self.lane_active(&m, l))
            .collect();
        let masked: Vec<Value> = lanes
            .iter()
            .zip(&act)
            .map(|(x, a)| self.b.ins().select(*a, *x, id))
            .collect();
        match mode {
            GroupMode::Reduce => {
                // Pairwise tree (also a better float sum than a chain).
                let mut cur = masked;
                while cur.len() > 1 {
                    let mut next = Vec::with_capacity(cur.len() / 2);
                    for pair in cur.chunks(2) {
                        next.push(if pair.len() == 2 {
                            self.combine(op, pair[0], pair[1])
                        } else {
                            pair[0]
                        });
                    }
                    cur = next;
                }
                Ok(Lv::U(cur[0]))
            }
            GroupMode::ClusteredReduce => Err(CompileError::codegen(
                "internal: clustered reductions are lowered in group_khr",
            )),
            GroupMode::InclusiveScan | GroupMode::ExclusiveScan => {
                let mut out = Vec::with_capacity(masked.len());
                let mut acc = id;
                for x in &masked {
                    if mode == GroupMode::ExclusiveScan {
                        out.push(acc);
                        acc = self.combine(op, acc, *x);
                    } else {
                        acc = self.combine(op, acc, *x);
                        out.push(acc);
                    }
                }
                Ok(self.pack_lanes(e, &out))
            }
        }
    }
}
