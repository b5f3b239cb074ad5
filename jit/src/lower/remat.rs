//! After the mid-end: constants get a copy in each block that uses them.
//!
//! Cranelift's e-graph hoists instructions without arguments out of loops: vector
//! constants (and stack slot addresses) move to the function's entry or the
//! preheader of the sub-group loop, and live across the whole body. A kernel has
//! dozens of them (lane-index vectors, masks, zeroes); they crowd the sixteen
//! vector registers, get spilled, and the register allocator reloads them on the
//! hot paths of loops that never use them (the grid-stride loop of a reduction
//! reloaded six constants per iteration that only code after it needed). Defined
//! again right before their first use in each block (and again before a use more
//! than [`REUSE_SPAN`] instructions later) they cost a constant-pool load (often
//! folded into the using instruction) or an `lea` there, and nothing anywhere else. (Copying
//! splats of kernel arguments and operations on constants as well was tried: more
//! instructions in hot blocks than it saved.) A use after a call gets a copy made
//! after the call: every call clobbers the vector registers, so a copy from before it
//! would be spilled and reloaded (clbench `math`: its two vector-math calls).

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::{self, Block, Inst, Opcode, Value};

/// Instructions of a block after a constant's copy within which later uses share
/// it; a use further on gets a copy of its own, right before it. A copy at the top
/// of a long straight block (Philox's ten unrolled rounds) lived across all of it
/// and was spilled: a store and a reload where a constant-pool load does.
const REUSE_SPAN: usize = 32;

/// Whether `op` makes a value from nothing but its immediates.
fn is_constant(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Vconst | Opcode::StackAddr | Opcode::F32const | Opcode::F64const | Opcode::Iconst
    )
}

/// Copies constants into the blocks that use them, before their uses (see the
/// module comment); removes originals left unused.
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
    // Widenings of vector constants: the e-graph hoists them out of loops like
    // constants, but the backend folds each into the product that uses it (the
    // `uwiden_low` pair of a `pmuludq`), so what lives across the loop is the
    // constant, spilled; copied with their constant they stay operands.
    let mut widened: HashMap<Value, (Inst, Block)> = HashMap::new();
    for &b in &blocks {
        for inst in func.layout.block_insts(b) {
            if let ir::InstructionData::Unary {
                opcode: Opcode::UwidenLow | Opcode::UwidenHigh,
                arg,
            } = func.dfg.insts[inst]
            {
                if def.contains_key(&func.dfg.resolve_aliases(arg)) {
                    widened.insert(func.dfg.first_result(inst), (inst, b));
                }
            }
        }
    }
    // Copy of each constant in each block, and the position it was made at.
    let mut copies: HashMap<(Block, Value), (Value, usize)> = HashMap::new();
    for &b in &blocks {
        let insts: Vec<Inst> = func.layout.block_insts(b).collect();
        // Position of the block's last call so far: copies from before it are not
        // reused after it.
        let mut last_call: Option<usize> = None;
        for (pos, inst) in insts.into_iter().enumerate() {
            let reusable = |at: usize| pos - at <= REUSE_SPAN && last_call.is_none_or(|c| at > c);
            if let Some(r) = func.dfg.inst_results(inst).first() {
                let original =
                    |m: &HashMap<Value, (Inst, Block)>| m.get(r).is_some_and(|&(ci, _)| ci == inst);
                if original(&def) || original(&widened) {
                    // An original serves the uses of its own block like a copy.
                    copies.insert((b, *r), (*r, pos));
                    continue;
                }
            }
            let mut repl: HashMap<Value, Value> = HashMap::new();
            let vals: Vec<Value> = func.dfg.inst_values(inst).collect();
            for v in vals {
                let r = func.dfg.resolve_aliases(v);
                let Some(&(ci, _)) = def.get(&r).or_else(|| widened.get(&r)) else {
                    continue;
                };
                let copy = match copies.get(&(b, r)) {
                    Some(&(c, at)) if reusable(at) => c,
                    _ => {
                        let new = func.dfg.clone_inst(ci);
                        if let ir::InstructionData::Unary { arg, .. } = func.dfg.insts[ci] {
                            // A widening: of this block's copy of the constant.
                            let arg = func.dfg.resolve_aliases(arg);
                            let cv = match copies.get(&(b, arg)) {
                                Some(&(c, at)) if reusable(at) => c,
                                _ => {
                                    let cc = func.dfg.clone_inst(def[&arg].0);
                                    func.layout.insert_inst(cc, inst);
                                    let c = func.dfg.first_result(cc);
                                    copies.insert((b, arg), (c, pos));
                                    c
                                }
                            };
                            func.dfg.map_inst_values(new, |_| cv);
                        }
                        func.layout.insert_inst(new, inst);
                        let c = func.dfg.first_result(new);
                        copies.insert((b, r), (c, pos));
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
                last_call = Some(pos);
            }
        }
    }
    // Widenings first: an unused one may leave its constant unused.
    for originals in [widened, def] {
        let used = used_values(func, &blocks);
        for (v, (inst, _)) in originals {
            if !used.contains(&v) {
                func.layout.remove_inst(inst);
            }
        }
    }
}

/// Every value some instruction of `blocks` uses.
fn used_values(func: &ir::Function, blocks: &[Block]) -> HashSet<Value> {
    let mut used: HashSet<Value> = HashSet::new();
    for &b in blocks {
        for inst in func.layout.block_insts(b) {
            for v in func.dfg.inst_values(inst) {
                used.insert(func.dfg.resolve_aliases(v));
            }
        }
    }
    used
}
