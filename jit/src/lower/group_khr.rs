//! The `cl_khr_subgroup_*` operations (SPIR-V `GroupNonUniform*`: broadcast-first,
//! all-equal, ballots, relative shuffles, rotate, clustered reductions) and the
//! `get_sub_group_*_mask` built-ins, as lane operations on the current mask: inactive
//! lanes never contribute, and every lane index is taken modulo W, so an out-of-range
//! shuffle reads some lane of the sub-group (an undefined value, never memory outside).
//!
//! Sub-groups have at most 32 lanes, so a ballot is its first component; the other
//! three are zero.

use cranelift_codegen::ir::{condcodes::FloatCC, condcodes::IntCC, types, InstBuilder, Value};

use super::value::{Elem, Lv, Val};
use super::Tr;
use crate::spirv::{BuiltIn, GroupMode, GroupOp, Id};
use crate::CompileError;

impl Tr<'_, '_> {
    /// The set lanes of mask `m` as the bits of an i32 (lane `l` = bit `l`).
    pub fn mask_bits(&mut self, m: &[Value]) -> Value {
        let mut acc: Option<Value> = None;
        for (c, ch) in m.iter().enumerate() {
            let bits = self.b.ins().vhigh_bits(types::I32, *ch);
            let v = if c == 0 {
                bits
            } else {
                self.b.ins().ishl_imm_s(bits, (4 * c) as i64)
            };
            acc = Some(match acc {
                None => v,
                Some(a) => self.b.ins().bor(a, v),
            });
        }
        acc.unwrap_or_else(|| self.b.ins().iconst(types::I32, 0))
    }

    /// Chunks of an i32 varying value whose lane `l` is the constant `f(l)`.
    fn lane_consts(&mut self, f: impl Fn(u32) -> u32) -> Vec<Value> {
        (0..self.nchunks(Elem::I32))
            .map(|c| {
                let bytes: Vec<u8> = (0..4u32)
                    .flat_map(|j| f(c as u32 * 4 + j).to_le_bytes())
                    .collect();
                self.vconst_bytes(types::I32X4, bytes)
            })
            .collect()
    }

    /// Bits below the maximal sub-group size W (the bits a ballot can hold).
    fn lane_bits_mask(&self) -> i64 {
        ((1u64 << self.w) - 1) as i64
    }

    /// `get_sub_group_{eq,ge,gt,le,lt}_mask()`: per lane constants (bits up to W).
    pub fn sub_group_mask_builtin(&mut self, b: BuiltIn) -> Vec<Lv> {
        let all = self.lane_bits_mask() as u64 as u32;
        let f = move |l: u32| -> u32 {
            let bit = 1u32 << l;
            let le = ((1u64 << (l + 1)) - 1) as u32;
            match b {
                BuiltIn::SubgroupEqMask => bit,
                BuiltIn::SubgroupGeMask => all & !(bit - 1),
                BuiltIn::SubgroupGtMask => all & !le,
                BuiltIn::SubgroupLeMask => le,
                _ => bit - 1,
            }
        };
        let c0 = self.lane_consts(f);
        let z = self.b.ins().iconst(types::I32, 0);
        vec![Lv::V(c0), Lv::U(z), Lv::U(z), Lv::U(z)]
    }

    /// The first active lane's value of a leaf (also used by 2D block I/O).
    pub(super) fn first_lane_value(&mut self, e: Elem, v: &Lv) -> Value {
        match v {
            Lv::U(x) => *x,
            Lv::A(base, stride) => {
                let first = self.first_active_lane();
                let ix = self.int_ext(first, Elem::I32, e);
                let d = self.b.ins().imul_imm_s(ix, *stride);
                self.b.ins().iadd(*base, d)
            }
            Lv::V(_) => {
                let first = self.first_active_lane();
                let ix = self.b.ins().uextend(types::I64, first);
                self.lane_dyn(e, v, ix)
            }
        }
    }

    /// An i32 (or narrower/wider) scalar `x` of element `from` as element `to`.
    fn int_ext(&mut self, x: Value, from: Elem, to: Elem) -> Value {
        use std::cmp::Ordering;
        match to.bits().cmp(&from.bits()) {
            Ordering::Greater => self.b.ins().uextend(to.scalar(), x),
            Ordering::Less => self.b.ins().ireduce(to.scalar(), x),
            Ordering::Equal => x,
        }
    }

    /// Whether every active lane of leaf `v` equals the first active lane's (floats
    /// compared as numbers: `-0 == +0`, a NaN equals nothing).
    fn all_equal_leaf(&mut self, e: Elem, v: &Lv) -> Value {
        let m = self.mask.clone();
        if v.is_uniform() {
            if e.is_float() {
                // Only a NaN differs from itself.
                let x = match v {
                    Lv::U(x) => *x,
                    _ => unreachable!("checked uniform"),
                };
                let x = if e == Elem::F16 {
                    match self.half_to_f32(&Lv::U(x)) {
                        Lv::U(f) => f,
                        _ => return self.b.ins().iconst(types::I8, 1),
                    }
                } else {
                    x
                };
                return self.b.ins().fcmp(FloatCC::Equal, x, x);
            }
            return self.b.ins().iconst(types::I8, 1);
        }
        if e == Elem::Bool {
            let vm = self.bool_mask(v);
            let t = self.mask_and(&m, &vm);
            let f = self.mask_and_not(&m, &vm);
            let (any_t, any_f) = (self.mask_any(&t), self.mask_any(&f));
            let both = self.b.ins().band(any_t, any_f);
            return self.b.ins().bxor_imm_s(both, 1);
        }
        let (ce, cv) = if e == Elem::F16 {
            (Elem::F32, self.half_to_f32(v))
        } else {
            (e, v.clone())
        };
        let first = self.first_lane_value(ce, &cv);
        let eq = if ce.is_float() {
            self.fcmp_lv(FloatCC::Equal, ce, &cv, &Lv::U(first))
        } else {
            self.icmp_lv(IntCC::Equal, ce, &cv, &Lv::U(first))
        };
        let em = self.bool_mask(&eq);
        let ne = self.mask_and_not(&m, &em);
        let any_ne = self.mask_any(&ne);
        self.b.ins().bxor_imm_s(any_ne, 1)
    }

    /// Lowers the operations of this module; `None` for the others.
    pub(super) fn group_khr(
        &mut self,
        op: GroupOp,
        mode: Option<GroupMode>,
        args: &[Id],
        vals: &[Val],
        elems: &std::rc::Rc<Vec<Elem>>,
    ) -> Result<Option<Val>, CompileError> {
        let arg = |i: usize| -> Result<&Val, CompileError> {
            vals.get(i).ok_or_else(|| {
                CompileError::malformed(format!("group operation {op:?} needs more operands"))
            })
        };
        let first_comp = |i: usize| -> Result<Lv, CompileError> {
            arg(i)?
                .leaves
                .first()
                .cloned()
                .ok_or_else(|| CompileError::malformed("a ballot without components"))
        };
        let leaves: Vec<Lv> = match op {
            GroupOp::BroadcastFirst => {
                let v = arg(0)?.clone();
                let mut out = Vec::with_capacity(v.leaves.len());
                for (l, e) in v.leaves.iter().zip(v.elems.iter()) {
                    out.push(Lv::U(self.first_lane_value(*e, l)));
                }
                out
            }
            GroupOp::AllEqual => {
                let v = arg(0)?.clone();
                let mut acc: Option<Value> = None;
                for (l, e) in v.leaves.iter().zip(v.elems.iter()) {
                    let r = self.all_equal_leaf(*e, l);
                    acc = Some(match acc {
                        None => r,
                        Some(a) => self.b.ins().band(a, r),
                    });
                }
                vec![Lv::U(
                    acc.unwrap_or_else(|| self.b.ins().iconst(types::I8, 1)),
                )]
            }
            GroupOp::Ballot => {
                let p = first_comp(0)?;
                let m = self.mask.clone();
                let pm = self.bool_mask(&p);
                let act = self.mask_and(&m, &pm);
                let bits = self.mask_bits(&act);
                let z = self.b.ins().iconst(types::I32, 0);
                vec![Lv::U(bits), Lv::U(z), Lv::U(z), Lv::U(z)]
            }
            GroupOp::InverseBallot => {
                let x = first_comp(0)?;
                let bit = self.lane_consts(|l| 1 << l);
                let xc = self.chunks_of(Elem::I32, &x);
                let mut out = Vec::with_capacity(xc.len());
                for (a, b) in xc.iter().zip(&bit) {
                    let t = self.b.ins().band(*a, *b);
                    out.push(self.b.ins().icmp(IntCC::Equal, t, *b));
                }
                vec![Lv::V(out)]
            }
            GroupOp::BallotBitExtract => {
                let v = arg(0)?.clone();
                let ix = arg(1)?;
                let idx = self.int_resize(&ix.leaves[0], ix.elems[0], Elem::I32, false);
                let mut ins: Vec<(Elem, &Lv)> = v.leaves.iter().map(|l| (Elem::I32, l)).collect();
                ins.push((Elem::I32, &idx));
                let n = v.leaves.len() as i64;
                vec![self.per_lane(&ins, Elem::Bool, |t, x| {
                    // Component idx / 32 (none past the last: false), bit idx % 32.
                    let i = x[x.len() - 1];
                    let comp = t.b.ins().ushr_imm_s(i, 5);
                    let mut word = t.b.ins().iconst(types::I32, 0);
                    for c in (0..n).rev() {
                        let is = t.b.ins().icmp_imm_s(IntCC::Equal, comp, c);
                        word = t.b.ins().select(is, x[c as usize], word);
                    }
                    let sh = t.b.ins().band_imm_s(i, 31);
                    let s = t.b.ins().ushr(word, sh);
                    let b = t.b.ins().band_imm_s(s, 1);
                    t.b.ins().icmp_imm_s(IntCC::NotEqual, b, 0)
                })]
            }
            GroupOp::BallotBitCount => {
                let x = first_comp(0)?;
                let all = self.lane_bits_mask();
                let x = self.band_const(Elem::I32, &x, all);
                match mode.unwrap_or(GroupMode::Reduce) {
                    GroupMode::Reduce => {
                        vec![self
                            .per_lane(&[(Elem::I32, &x)], Elem::I32, |t, v| t.b.ins().popcnt(v[0]))]
                    }
                    m => {
                        let inclusive = m == GroupMode::InclusiveScan;
                        let below = self.lane_consts(|l| {
                            let le = ((1u64 << (l + 1)) - 1) as u32;
                            if inclusive {
                                le
                            } else {
                                le >> 1
                            }
                        });
                        let xc = self.chunks_of(Elem::I32, &x);
                        let anded: Vec<Value> = xc
                            .iter()
                            .zip(&below)
                            .map(|(a, b)| self.b.ins().band(*a, *b))
                            .collect();
                        let lanes = self.lanes_of(Elem::I32, &Lv::V(anded));
                        let counts: Vec<Value> =
                            lanes.iter().map(|v| self.b.ins().popcnt(*v)).collect();
                        vec![self.pack_lanes(Elem::I32, &counts)]
                    }
                }
            }
            GroupOp::BallotFindLsb | GroupOp::BallotFindMsb => {
                let x = first_comp(0)?;
                let all = self.lane_bits_mask();
                let lsb = op == GroupOp::BallotFindLsb;
                vec![self.per_lane(&[(Elem::I32, &x)], Elem::I32, |t, v| {
                    let m = t.b.ins().band_imm_s(v[0], all);
                    if lsb {
                        t.b.ins().ctz(m)
                    } else {
                        // 31 - clz (an empty ballot gives -1: undefined).
                        let z = t.b.ins().clz(m);
                        let n = t.b.ins().ineg(z);
                        t.b.ins().iadd_imm_s(n, 31)
                    }
                })]
            }
            GroupOp::ShuffleUpKhr | GroupOp::ShuffleDownKhr | GroupOp::Rotate => {
                let v = arg(0)?.clone();
                let d = arg(1)?;
                let delta = self.int_resize(&d.leaves[0], d.elems[0], Elem::I64, false);
                let w = i64::from(self.w);
                let cluster = if op == GroupOp::Rotate && args.len() == 3 {
                    self.constant_operand(args[2])?.clamp(1, w)
                } else {
                    w
                };
                let mut out = Vec::with_capacity(v.leaves.len());
                for (l, e) in v.leaves.iter().zip(v.elems.iter()) {
                    if l.is_uniform() {
                        out.push(l.clone());
                        continue;
                    }
                    out.push(self.relative_shuffle(op, *e, l, &delta, cluster));
                }
                out
            }
            op if op.is_arithmetic() && mode == Some(GroupMode::ClusteredReduce) => {
                let v = arg(0)?.clone();
                let cs = args
                    .last()
                    .ok_or_else(|| CompileError::malformed("clustered reduction without a size"))?;
                let cluster = self.constant_operand(*cs)?.clamp(1, i64::from(self.w)) as usize;
                let mut out = Vec::with_capacity(v.leaves.len());
                for (l, e) in v.leaves.iter().zip(v.elems.iter()) {
                    out.push(if *e == Elem::F16 {
                        let wide = self.half_to_f32(l);
                        let r = self.clustered_reduce(op, Elem::F32, &wide, cluster);
                        self.f32_to_half(&r)
                    } else {
                        self.clustered_reduce(op, *e, l, cluster)
                    });
                }
                out
            }
            _ => return Ok(None),
        };
        Ok(Some(Val {
            leaves,
            elems: elems.clone(),
        }))
    }

    /// `v & k` for a constant `k` (a splat for varying values: x86 has no vector
    /// and-immediate).
    fn band_const(&mut self, e: Elem, v: &Lv, k: i64) -> Lv {
        let kv = Lv::U(self.iconst(e, k));
        self.vec_op2(
            e,
            v,
            &kv,
            |t, x, y| t.b.ins().band(x, y),
            |t, x, y| t.b.ins().band(x, y),
        )
    }

    /// The value of an integer constant operand.
    fn constant_operand(&self, id: Id) -> Result<i64, CompileError> {
        match self.m.constants.get(&id) {
            Some(crate::spirv::Constant {
                value: crate::spirv::ConstValue::Scalar(v),
                ..
            }) => Ok(*v as i64),
            _ => Err(CompileError::malformed(format!(
                "%{id} must be an integer constant"
            ))),
        }
    }

    /// Shuffle up / down by `delta`, or rotate by `delta` within clusters of
    /// `cluster` lanes (a power of two up to W).
    fn relative_shuffle(&mut self, op: GroupOp, e: Elem, v: &Lv, delta: &Lv, cluster: i64) -> Lv {
        let w = self.w as usize;
        let c = cluster as usize;
        if let Lv::U(dv) = delta {
            if let Some(k) = self.const_of(*dv) {
                // W divides 2^64 (and every cluster size divides W).
                let k = (k as u64 % w as u64) as usize;
                let m = |l: usize| match op {
                    GroupOp::ShuffleUpKhr => (l + w - k) % w,
                    GroupOp::ShuffleDownKhr => (l + k) % w,
                    _ => ((l + k) % c) + (l / c) * c,
                };
                let ch = self.chunks_of(e, v);
                if let Some(r) = self.static_permute(e, &ch, m) {
                    return r;
                }
            }
        }
        // Index vector: lane -/+ delta, or the rotation within the cluster.
        let lane = Lv::A(self.b.ins().iconst(types::I64, 0), 1);
        let idx = match op {
            GroupOp::ShuffleUpKhr => self.vec_op2(
                Elem::I64,
                &lane,
                delta,
                |t, x, y| t.b.ins().isub(x, y),
                |t, x, y| t.b.ins().isub(x, y),
            ),
            GroupOp::ShuffleDownKhr => self.add_lv(Elem::I64, &lane, delta),
            _ => {
                let sum = self.add_lv(Elem::I64, &lane, delta);
                let within = self.band_const(Elem::I64, &sum, cluster - 1);
                let base = Lv::A(self.b.ins().iconst(types::I64, 0), 1);
                let base = self.band_const(Elem::I64, &base, !(cluster - 1));
                self.vec_op2(
                    Elem::I64,
                    &within,
                    &base,
                    |t, x, y| t.b.ins().bor(x, y),
                    |t, x, y| t.b.ins().bor(x, y),
                )
            }
        };
        self.shuffle_lanes(e, v, &idx)
    }

    /// Reduction of the active lanes of each cluster of `cluster` consecutive lanes,
    /// given to every lane of the cluster.
    fn clustered_reduce(&mut self, op: GroupOp, e: Elem, v: &Lv, cluster: usize) -> Lv {
        let m = self.mask.clone();
        let id = self.group_identity(op, e);
        let lanes = self.lanes_of(e, v);
        let mut masked = Vec::with_capacity(lanes.len());
        for (l, x) in lanes.iter().enumerate() {
            let a = self.lane_active(&m, l);
            masked.push(self.b.ins().select(a, *x, id));
        }
        let mut out = Vec::with_capacity(masked.len());
        for chunk in masked.chunks(cluster) {
            // Pairwise tree, as the whole-sub-group reduction.
            let mut cur = chunk.to_vec();
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
            out.extend(std::iter::repeat_n(cur[0], chunk.len()));
        }
        self.pack_lanes(e, &out)
    }
}
