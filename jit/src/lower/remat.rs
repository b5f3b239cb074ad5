//! After the mid-end: constants get a copy in each block that uses them.
//!
//! Cranelift's e-graph hoists instructions without arguments out of loops: vector
//! constants (and stack slot addresses) move to the function's entry or the
//! preheader of the sub-group loop, and live across the whole body. A kernel has
//! dozens of them (lane-index vectors, masks, zeroes); they crowd the sixteen
//! vector registers, get spilled, and the register allocator reloads them on the
//! hot paths of loops that never use them (the grid-stride loop of a reduction
//! reloaded six constants per iteration that only code after it needed). Defined
//! again in the block of each use they cost a constant-pool load (often folded into
//! the using instruction) or an `lea` there, and nothing anywhere else. (Copying
//! splats of kernel arguments and operations on constants as well was tried: more
//! instructions in hot blocks than it saved.) Uses after a call in the block get a
//! copy made after the call: every call clobbers the vector registers, so one copy
//! before it would be spilled and reloaded (clbench `math`: its two vector-math calls).

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::{self, Block, Inst, Opcode, Value};

/// Whether `op` makes a value from nothing but its immediates.
fn is_constant(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Vconst | Opcode::StackAddr | Opcode::F32const | Opcode::F64const | Opcode::Iconst
    )
}

/// Copies constants into the blocks that use them, before each block's first
/// original instruction (see the module comment); removes originals left unused.
pub(crate) fn remat_constants(func: &mut ir::Function) {
    let blocks: Vec<Block> = func.layout.blocks().collect();
    let mut def: HashMap<Value, (Inst, Block)> = HashMap::new();
    for &b in &blocks {
        for inst in func.layout.block_insts(b) {
            let op = func.dfg.insts[inst].opcode();
            if is_constant(op) && func.dfg.inst_results(inst).len() == 1 {
                def.insert(func.dfg.first_result(inst), (inst, b));
            }
        }
    }
    if def.is_empty() {
        return;
    }
    let anchors: HashMap<Block, Inst> = blocks
        .iter()
        .filter_map(|&b| func.layout.first_inst(b).map(|i| (b, i)))
        .collect();
    // Per block and call segment (a call clobbers every vector register: a copy made
    // before it would be spilled across it, so uses after a call get their own copy,
    // made right after the call).
    let mut copies: HashMap<(Block, usize, Value), Value> = HashMap::new();
    for &b in &blocks {
        let insts: Vec<Inst> = func.layout.block_insts(b).collect();
        let mut segment = 0usize;
        let mut anchor = anchors.get(&b).copied();
        for inst in insts {
            let mut repl: HashMap<Value, Value> = HashMap::new();
            let vals: Vec<Value> = func.dfg.inst_values(inst).collect();
            for v in vals {
                let r = func.dfg.resolve_aliases(v);
                let Some(&(ci, cb)) = def.get(&r) else {
                    continue;
                };
                if cb == b {
                    continue;
                }
                let Some(at) = anchor else { continue };
                let copy = match copies.get(&(b, segment, r)) {
                    Some(c) => *c,
                    None => {
                        let new = func.dfg.clone_inst(ci);
                        func.layout.insert_inst(new, at);
                        let c = func.dfg.first_result(new);
                        copies.insert((b, segment, r), c);
                        c
                    }
                };
                repl.insert(v, copy);
            }
            if !repl.is_empty() {
                func.dfg
                    .map_inst_values(inst, |x| repl.get(&x).copied().unwrap_or(x));
            }
            if func.dfg.insts[inst].opcode().is_call() {
                segment += 1;
                anchor = func.layout.next_inst(inst);
            }
        }
    }
    let mut used: HashSet<Value> = HashSet::new();
    for &b in &blocks {
        for inst in func.layout.block_insts(b) {
            for v in func.dfg.inst_values(inst) {
                used.insert(func.dfg.resolve_aliases(v));
            }
        }
    }
    for (v, (inst, _)) in def {
        if !used.contains(&v) {
            func.layout.remove_inst(inst);
        }
    }
}
