//! Pointers at constant byte offsets from a root pointer: what `promote` (offsets
//! into a private variable) and `combine` (the fields of one array element) both
//! need. Bitcasts, copies, address-space casts and access chains with constant
//! indices derive a pointer from its base; anything else is a root. Access chains
//! with equal operands are one root (clang recomputes `z + i` for each field).

use std::collections::HashMap;

use super::cfg::Cfg;
use super::flatten::FlatFunction;
use crate::spirv::{Id, Module, Op, Type};

/// Pointer id -> (root pointer, byte offset from it); roots map to themselves at 0.
pub fn pointer_roots(
    m: &Module,
    flat: &FlatFunction,
    cfg: &Cfg,
    types: &HashMap<Id, Id>,
) -> HashMap<Id, (Id, i64)> {
    let mut roots: HashMap<Id, (Id, i64)> = HashMap::new();
    let mut chains: HashMap<(Id, Option<Id>, Vec<Id>), Id> = HashMap::new();
    // Reachable blocks in reverse post-order (a definition's block comes before its
    // uses'), then the unreachable ones in block order.
    let rpo = cfg.rpo();
    let unreachable = (0..flat.blocks.len()).filter(|b| !cfg.reachable(*b));
    for b in rpo.into_iter().chain(unreachable) {
        for i in &flat.blocks[b].insts {
            let (Some(r), Some(t)) = (i.result, i.ty) else {
                continue;
            };
            if !matches!(m.ty(t), Ok(Type::Pointer { .. })) {
                continue;
            }
            let root_of = |p: Id| roots.get(&p).copied().unwrap_or((p, 0));
            let entry = match &i.op {
                Op::Bitcast(p) | Op::CopyObject(p) | Op::PtrCast(p) => root_of(*p),
                Op::AccessChain {
                    base,
                    element,
                    indices,
                } => match types
                    .get(base)
                    .and_then(|bt| m.constant_chain_offset(*bt, *element, indices))
                {
                    Some(d) => {
                        let (root, off) = root_of(*base);
                        (root, off.wrapping_add(d))
                    }
                    None => {
                        let b = match root_of(*base) {
                            (rb, 0) => rb,
                            _ => *base,
                        };
                        let key = (b, *element, indices.clone());
                        (*chains.entry(key).or_insert(r), 0)
                    }
                },
                _ => (r, 0),
            };
            roots.insert(r, entry);
        }
    }
    roots
}
