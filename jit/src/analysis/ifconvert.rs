//! If-conversion: a small acyclic region of side-effect-free blocks between a
//! conditional branch and the block where its paths meet becomes straight-line code,
//! its phis `OpSelect`s on the paths' conditions.
//!
//! In the lane model a divergent branch costs a mask per block, a test whether any
//! lane takes each block, and blends of every phi; for a few instructions per side
//! that is most of the work. clang keeps such branches where C's `||` and `?:`
//! short-circuit: pyopencl's float `max` reduction reduces with `(isnan(a) ||
//! isnan(b)) ? a + b : fmax(a, b)`, three divergent branches per element (2^24 floats:
//! 85 ms, Intel's CPU runtime 31 ms). Converted, every lane computes both sides and
//! picks its own; since nothing in the region can trap or write memory, and the region
//! is small, that is always cheaper. Loads stay behind their branches (inactive lanes
//! must not touch memory), as do calls, atomics, barriers, integer division and the
//! OpenCL.std functions that write through a pointer or are costly.
//!
//! Runs on the inlined function after a first uniformity analysis (branches on uniform
//! conditions stay jumps); the CFG and uniformity are then analysed again.

use std::collections::{HashMap, HashSet};

use rspirv::spirv::OpenclStd100Op as C;

use super::flatten::FlatFunction;
use crate::spirv::{BinOp, Block, Id, Inst, NoWrap, Op, Terminator, UnOp};

/// Instructions a region's blocks may hold in total (phis included): both sides run
/// for every lane afterwards.
const MAX_REGION_INSTS: usize = 24;

/// Blocks a region may hold besides its branch and its join.
const MAX_REGION_BLOCKS: usize = 6;

/// Converts every small region whose branch condition `divergent` holds (see the
/// module comment); returns how many. A uniform branch is a real jump, cheaper than
/// running both sides.
pub fn if_convert(f: &mut FlatFunction, divergent: impl Fn(Id) -> bool) -> usize {
    let mut ix: HashMap<Id, usize> = HashMap::new();
    for (i, b) in f.blocks.iter().enumerate() {
        ix.insert(b.label, i);
    }
    let mut preds: HashMap<Id, Vec<Id>> = HashMap::new();
    for b in &f.blocks {
        let mut succ = b.term.successors();
        succ.dedup();
        for s in succ {
            preds.entry(s).or_default().push(b.label);
        }
    }
    let types: HashMap<Id, Id> = f
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter_map(|i| Some((i.result?, i.ty?)))
        .collect();
    let mut removed: HashSet<Id> = HashSet::new();
    let mut converted = 0;
    for h in 0..f.blocks.len() {
        if removed.contains(&f.blocks[h].label) {
            continue;
        }
        // A converted region can expose the next one at the same branch block.
        while let Some(region) = find_region(f, &ix, &preds, &removed, h, &divergent) {
            let Some(&bool_ty) = types.get(&region.cond) else {
                break;
            };
            apply(f, &ix, &preds, h, &region, bool_ty);
            for s in &region.blocks {
                removed.insert(*s);
            }
            preds.insert(region.join, vec![f.blocks[h].label]);
            converted += 1;
        }
    }
    if converted > 0 {
        f.blocks.retain(|b| !removed.contains(&b.label));
    }
    converted
}

/// A region found at a branch block.
struct Region {
    cond: Id,
    /// The blocks between the branch and the join, each after its predecessors.
    blocks: Vec<Id>,
    join: Id,
}

/// The region whose branch ends block `h`, if it is small and side-effect free.
fn find_region(
    f: &FlatFunction,
    ix: &HashMap<Id, usize>,
    preds: &HashMap<Id, Vec<Id>>,
    removed: &HashSet<Id>,
    h: usize,
    divergent: impl Fn(Id) -> bool,
) -> Option<Region> {
    let head = &f.blocks[h];
    let Terminator::BranchCond { cond, t, f: e } = head.term else {
        return None;
    };
    if t == e || !divergent(cond) {
        return None;
    }
    let block = |l: Id| -> Option<&Block> {
        let &i = ix.get(&l)?;
        (!removed.contains(&l)).then(|| &f.blocks[i])
    };
    let mut inside: Vec<Id> = Vec::new();
    let mut insts = 0;
    loop {
        let from_region = |p: &Id| *p == head.label || inside.contains(p);
        // The blocks the region's edges leave to.
        let mut frontier: Vec<Id> = Vec::new();
        for l in std::iter::once(head.label).chain(inside.iter().copied()) {
            for s in block(l)?.term.successors() {
                if !inside.contains(&s) && !frontier.contains(&s) {
                    frontier.push(s);
                }
            }
        }
        if let [join] = frontier[..] {
            let joined = preds.get(&join)?;
            if join == head.label || inside.is_empty() || !joined.iter().all(from_region) {
                return None;
            }
            return Some(Region {
                cond,
                blocks: inside,
                join,
            });
        }
        if inside.len() == MAX_REGION_BLOCKS {
            return None;
        }
        // A frontier block entered only from the region, that may be speculated.
        let next = frontier.iter().copied().find(|&s| {
            s != head.label
                && preds.get(&s).is_some_and(|ps| ps.iter().all(from_region))
                && block(s).is_some_and(|b| {
                    matches!(
                        b.term,
                        Terminator::Branch(_) | Terminator::BranchCond { .. }
                    ) && b.insts.iter().all(|i| speculatable(&i.op))
                })
        })?;
        insts += block(next)?.insts.len();
        if insts > MAX_REGION_INSTS {
            return None;
        }
        inside.push(next);
    }
}

/// Whether `op` may run for lanes that would not have reached it: no memory access,
/// no trap, no side effect, and cheap.
fn speculatable(op: &Op) -> bool {
    match op {
        Op::Binary(b, ..) => !matches!(
            b,
            BinOp::UDiv | BinOp::SDiv | BinOp::UMod | BinOp::SRem | BinOp::SMod
        ),
        Op::Unary(..) => true,
        Op::Convert { .. }
        | Op::Select { .. }
        | Op::Phi(_)
        | Op::CompositeExtract { .. }
        | Op::CompositeInsert { .. }
        | Op::CompositeConstruct(_)
        | Op::VectorShuffle { .. }
        | Op::VectorTimesScalar(..)
        | Op::CopyObject(_)
        | Op::Bitcast(_)
        | Op::Dot(..) => true,
        Op::ExtInst { opcode, .. } => CHEAP_EXT.iter().any(|c| *c as u32 == *opcode),
        _ => false,
    }
}

/// OpenCL.std functions a region may compute for every lane: a few instructions
/// each, no pointer operands.
const CHEAP_EXT: &[C] = &[
    C::ceil,
    C::copysign,
    C::fabs,
    C::fdim,
    C::floor,
    C::fma,
    C::fmax,
    C::fmin,
    C::fmax_common,
    C::fmin_common,
    C::fclamp,
    C::mad,
    C::mix,
    C::rint,
    C::round,
    C::trunc,
    C::sqrt,
    C::step,
    C::sign,
    C::s_abs,
    C::u_abs,
    C::s_max,
    C::u_max,
    C::s_min,
    C::u_min,
    C::s_clamp,
    C::u_clamp,
    C::s_add_sat,
    C::u_add_sat,
    C::s_sub_sat,
    C::u_sub_sat,
    C::bitselect,
    C::select,
];

/// The instructions [`apply`] builds: path conditions, negations, selects.
struct Builder {
    next_id: Id,
    bool_ty: Id,
    terms: HashMap<Id, Terminator>,
    /// Path conditions of the region's blocks: None is "always" (the branch block's).
    path: HashMap<Id, Option<Id>>,
    negated: HashMap<Id, Id>,
    out: Vec<Inst>,
}

impl Builder {
    fn emit(&mut self, ty: Id, op: Op) -> Id {
        let id = self.next_id;
        self.next_id += 1;
        self.push(id, ty, op);
        id
    }

    fn push(&mut self, result: Id, ty: Id, op: Op) {
        self.out.push(Inst {
            result: Some(result),
            ty: Some(ty),
            op,
            wrap: NoWrap::default(),
        });
    }

    /// The condition of the edge `from -> to` (None: whenever `from` runs).
    fn edge(&mut self, from: Id, to: Id) -> Option<Id> {
        let p = self.path.get(&from).copied().flatten();
        let c = match self.terms.get(&from) {
            Some(&Terminator::BranchCond { cond, t, f }) if t != f => {
                if t == to {
                    cond
                } else if let Some(&n) = self.negated.get(&cond) {
                    n
                } else {
                    let n = self.emit(self.bool_ty, Op::Unary(UnOp::LogicalNot, cond));
                    self.negated.insert(cond, n);
                    n
                }
            }
            _ => return p,
        };
        Some(match p {
            None => c,
            Some(p) => self.emit(self.bool_ty, Op::Binary(BinOp::LogicalAnd, p, c)),
        })
    }

    /// The path condition of `b`: any of its incoming edges.
    fn enter(&mut self, b: Id, preds: &[Id]) {
        let mut cond: Option<Option<Id>> = None;
        for &p in preds {
            let e = self.edge(p, b);
            cond = Some(match (cond, e) {
                (None, e) => e,
                (Some(None), _) | (_, None) => None,
                (Some(Some(a)), Some(e)) => {
                    Some(self.emit(self.bool_ty, Op::Binary(BinOp::LogicalOr, a, e)))
                }
            });
        }
        self.path.insert(b, cond.flatten());
    }

    /// Phi `phi` of block `to` as a chain of selects on its incoming edges.
    fn select_phi(&mut self, phi: &Inst, incoming: &[(Id, Id)], to: Id) {
        let (Some(result), Some(ty)) = (phi.result, phi.ty) else {
            return;
        };
        let arms: Vec<(Option<Id>, Id)> = incoming
            .iter()
            .map(|&(v, from)| (self.edge(from, to), v))
            .collect();
        let Some((&(_, last), rest)) = arms.split_last() else {
            return;
        };
        let mut value = last;
        for &(c, v) in rest.iter().rev() {
            value = match c {
                Some(c) => self.emit(
                    ty,
                    Op::Select {
                        cond: c,
                        a: v,
                        b: value,
                    },
                ),
                // Always taken: the other edges never are.
                None => v,
            };
        }
        self.push(result, ty, Op::CopyObject(value));
    }
}

/// Rewrites block `h` to run the region and select its phis' values.
fn apply(
    f: &mut FlatFunction,
    ix: &HashMap<Id, usize>,
    preds: &HashMap<Id, Vec<Id>>,
    h: usize,
    r: &Region,
    bool_ty: Id,
) {
    let head = f.blocks[h].label;
    let mut b = Builder {
        next_id: f.next_id,
        bool_ty,
        terms: std::iter::once(head)
            .chain(r.blocks.iter().copied())
            .map(|l| (l, f.blocks[ix[&l]].term.clone()))
            .collect(),
        path: HashMap::from([(head, None)]),
        negated: HashMap::new(),
        out: Vec::new(),
    };
    for &l in &r.blocks {
        b.enter(l, preds.get(&l).map_or(&[][..], |v| &v[..]));
        for mut i in std::mem::take(&mut f.blocks[ix[&l]].insts) {
            if let Op::Phi(incoming) = &i.op {
                let incoming = incoming.clone();
                b.select_phi(&i, &incoming, l);
            } else {
                // A wrap flag promises no overflow where the lane really runs it.
                i.wrap = NoWrap::default();
                b.out.push(i);
            }
        }
    }
    let join = &mut f.blocks[ix[&r.join]];
    let (phis, rest): (Vec<Inst>, Vec<Inst>) = std::mem::take(&mut join.insts)
        .into_iter()
        .partition(|i| matches!(i.op, Op::Phi(_)));
    join.insts = rest;
    for phi in &phis {
        if let Op::Phi(incoming) = &phi.op {
            b.select_phi(phi, incoming, r.join);
        }
    }
    f.next_id = b.next_id;
    let head_block = &mut f.blocks[h];
    head_block.insts.extend(b.out);
    head_block.term = Terminator::Branch(r.join);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Type ids of the test functions: 1 bool, 2 float.
    const BOOL: Id = 1;
    const FLOAT: Id = 2;

    fn inst(result: Id, ty: Id, op: Op) -> Inst {
        Inst {
            result: Some(result),
            ty: Some(ty),
            op,
            wrap: NoWrap::default(),
        }
    }

    /// `c = a < b; if (c) x = a + b; else x = a * b (or a load); return x`.
    fn diamond(else_op: Op) -> FlatFunction {
        let block = |label, insts, term| Block { label, insts, term };
        FlatFunction {
            name: "k".into(),
            params: vec![],
            blocks: vec![
                block(
                    100,
                    vec![inst(10, BOOL, Op::Binary(BinOp::FOrdLessThan, 3, 4))],
                    Terminator::BranchCond {
                        cond: 10,
                        t: 101,
                        f: 102,
                    },
                ),
                block(
                    101,
                    vec![inst(11, FLOAT, Op::Binary(BinOp::FAdd, 3, 4))],
                    Terminator::Branch(103),
                ),
                block(102, vec![inst(12, FLOAT, else_op)], Terminator::Branch(103)),
                block(
                    103,
                    vec![inst(13, FLOAT, Op::Phi(vec![(11, 101), (12, 102)]))],
                    Terminator::ReturnValue(13),
                ),
            ],
            next_id: 200,
        }
    }

    #[test]
    fn diamond_becomes_a_select() {
        let mut f = diamond(Op::Binary(BinOp::FMul, 3, 4));
        assert_eq!(if_convert(&mut f, |_| true), 1);
        let labels: Vec<Id> = f.blocks.iter().map(|b| b.label).collect();
        assert_eq!(labels, [100, 103]);
        assert!(matches!(f.blocks[0].term, Terminator::Branch(103)));
        assert!(f.blocks[1].insts.is_empty(), "the join keeps no phi");
        let ops: Vec<&Op> = f.blocks[0].insts.iter().map(|i| &i.op).collect();
        assert!(ops.contains(&&Op::Select {
            cond: 10,
            a: 11,
            b: 12
        }));
        let phi = f.blocks[0].insts.last().expect("phi value");
        assert_eq!(phi.result, Some(13));
        assert!(matches!(phi.op, Op::CopyObject(_)));
    }

    #[test]
    fn loads_keep_their_branch() {
        let mut f = diamond(Op::Load { ptr: 5, align: 4 });
        assert_eq!(if_convert(&mut f, |_| true), 0);
        assert_eq!(f.blocks.len(), 4);
        let mut f = diamond(Op::Binary(BinOp::SDiv, 3, 4));
        assert_eq!(
            if_convert(&mut f, |_| true),
            0,
            "integer division keeps its branch"
        );
        let mut f = diamond(Op::Binary(BinOp::FMul, 3, 4));
        assert_eq!(if_convert(&mut f, |c| c != 10), 0, "a uniform branch stays");
    }
}
