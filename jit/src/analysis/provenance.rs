//! Which pointers provably point into the kernel's private variables: those derived
//! from an `OpVariable` of the flat function by access chains, casts (also through
//! the generic address space), copies, and phis or selects of such pointers.
//!
//! Lowering accesses private memory without per-lane guards (every lane's copy is
//! valid), so the property must come from where a pointer was made, never from its
//! type alone: a `Function`-typed pointer returned by `to_private` or
//! `OpGenericCastToPtr` may be null for lanes that do not use it.

use std::collections::HashSet;

use super::flatten::FlatFunction;
use crate::spirv::{Id, Op};

/// The ids of `f` whose value is a pointer into a private variable of `f`.
pub fn private_pointers(f: &FlatFunction) -> HashSet<Id> {
    // Greatest fixed point: start from every candidate, drop those with an input that
    // is not private, until nothing changes (loop phis keep their own back edges).
    let mut set: HashSet<Id> = HashSet::new();
    for b in &f.blocks {
        for i in &b.insts {
            if let Some(r) = i.result {
                if candidate_inputs(&i.op).is_some() {
                    set.insert(r);
                }
            }
        }
    }
    loop {
        let before = set.len();
        for b in &f.blocks {
            for i in &b.insts {
                let Some(r) = i.result else { continue };
                if !set.contains(&r) {
                    continue;
                }
                let inputs = candidate_inputs(&i.op).unwrap_or_default();
                if !inputs.iter().all(|x| set.contains(x)) {
                    set.remove(&r);
                }
            }
        }
        if set.len() == before {
            return set;
        }
    }
}

/// The pointer inputs whose privacy `op`'s result inherits, or None when `op` never
/// yields a private pointer. An `OpVariable` has no inputs: it is private itself.
fn candidate_inputs(op: &Op) -> Option<Vec<Id>> {
    Some(match op {
        Op::Variable { .. } => Vec::new(),
        Op::AccessChain { base, .. } => vec![*base],
        Op::Bitcast(a) | Op::PtrCast(a) | Op::CopyObject(a) => vec![*a],
        Op::Select { a, b, .. } => vec![*a, *b],
        Op::Phi(incoming) => incoming.iter().map(|(v, _)| *v).collect(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spirv::{Block, Inst, Terminator};

    fn inst(result: Id, op: Op) -> Inst {
        Inst {
            result: Some(result),
            ty: None,
            op,
            wrap: Default::default(),
        }
    }

    #[test]
    fn follows_derivations_and_loop_phis() {
        // %1 = variable; %2 = chain(%1); %3 = phi(%2, %4); %4 = chain(%3);
        // %5 = param-derived chain; %6 = select(%2, %5); %7 = generic cast to private
        // of an unknown pointer (a call result); %8 = bitcast(%3).
        let f = FlatFunction {
            name: "k".into(),
            params: vec![(50, 51)],
            blocks: vec![
                Block {
                    label: 100,
                    insts: vec![
                        inst(1, Op::Variable { init: None }),
                        inst(
                            2,
                            Op::AccessChain {
                                base: 1,
                                element: None,
                                indices: vec![],
                            },
                        ),
                    ],
                    term: Terminator::Branch(101),
                },
                Block {
                    label: 101,
                    insts: vec![
                        inst(3, Op::Phi(vec![(2, 100), (4, 101)])),
                        inst(
                            4,
                            Op::AccessChain {
                                base: 3,
                                element: None,
                                indices: vec![],
                            },
                        ),
                        inst(
                            5,
                            Op::AccessChain {
                                base: 50,
                                element: None,
                                indices: vec![],
                            },
                        ),
                        inst(
                            6,
                            Op::Select {
                                cond: 60,
                                a: 2,
                                b: 5,
                            },
                        ),
                        inst(7, Op::GenericCastToPtrExplicit(5)),
                        inst(8, Op::Bitcast(3)),
                    ],
                    term: Terminator::Return,
                },
            ],
            next_id: 200,
        };
        let set = private_pointers(&f);
        let mut got: Vec<Id> = set.into_iter().collect();
        got.sort();
        assert_eq!(got, vec![1, 2, 3, 4, 8]);
    }
}
