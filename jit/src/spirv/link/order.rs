//! Puts the merged types, constants and global variables in an order where every id
//! is defined before it is used (an import resolved to a definition from a later
//! input can make a global refer forward). Keeps the merged order where it is already
//! right; a forward-declared pointer type counts as defined at its
//! `OpTypeForwardPointer`.

use std::collections::HashMap;

use rspirv::dr;
use rspirv::spirv::{Op, Word};

/// Reorders `module.types_global_values` so definitions precede uses.
pub fn sort_globals(module: &mut dr::Module) {
    let insts = std::mem::take(&mut module.types_global_values);
    // Where each id is defined; a forward-declared pointer at its declaration.
    let mut defined_at: HashMap<Word, usize> = HashMap::new();
    for (i, inst) in insts.iter().enumerate() {
        if inst.class.opcode == Op::TypeForwardPointer {
            if let Some(id) = inst.operands.first().and_then(|o| o.id_ref_any()) {
                defined_at.insert(id, i);
            }
        }
    }
    for (i, inst) in insts.iter().enumerate() {
        if let Some(id) = inst.result_id {
            defined_at.entry(id).or_insert(i);
        }
    }
    let deps = |i: usize| -> Vec<usize> {
        let inst = &insts[i];
        let forward_decl = inst.class.opcode == Op::TypeForwardPointer;
        inst.result_type
            .into_iter()
            .chain(inst.operands.iter().filter_map(|o| o.id_ref_any()))
            .filter(|_| !forward_decl)
            .filter_map(|id| defined_at.get(&id).copied())
            .filter(|&d| d != i)
            .collect()
    };
    // Iterative depth-first post-order, visiting in the merged order.
    let mut state = vec![0u8; insts.len()]; // 0 new, 1 on the stack, 2 placed
    let mut order = Vec::with_capacity(insts.len());
    for start in 0..insts.len() {
        if state[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, deps(start), 0usize)];
        state[start] = 1;
        while let Some((node, node_deps, next)) = stack.last_mut() {
            if let Some(&d) = node_deps.get(*next) {
                *next += 1;
                if state[d] == 0 {
                    state[d] = 1;
                    stack.push((d, deps(d), 0));
                }
                // state 1: a cycle (only through forward pointers, which are cut
                // above, or in a broken module): leave the order as merged.
                continue;
            }
            state[*node] = 2;
            order.push(*node);
            stack.pop();
        }
    }
    let mut slots: Vec<Option<dr::Instruction>> = insts.into_iter().map(Some).collect();
    module.types_global_values = order.into_iter().filter_map(|i| slots[i].take()).collect();
}
