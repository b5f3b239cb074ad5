//! After the mid-end: two moves of pure instructions inside innermost loops that
//! shorten live ranges, so that a wide sub-group's divergent loop fits the sixteen
//! vector registers better.
//!
//! The e-graph places each pure instruction where it is first needed, and shares
//! equal ones. In a divergent loop (clbench `mandelbrot`) that leaves, across the
//! header's "some lane leaves" branch, both the old mask and the condition (the
//! mask of the lanes that stay is computed only in the block after it) and the
//! products the exit test shares with the body (`zi * zi`): at width 16 that was
//! eight vectors more than the registers hold, spilled and reloaded every
//! iteration (with masks packed by `mask_pack` the two masks take two registers
//! instead of eight; the recomputed products still pay, see
//! [`RECOMPUTE_MIN_CARRIED`]). So:
//! - *hoist*: a mask operation (`band`, `bor`, `bnot`) whose operands
//!   are all available at the end of the block's immediate dominator in the same
//!   loop, and one of which is used nowhere else after it, moves there (its
//!   operands die earlier, one result lives instead);
//! - *recompute*: a float product, sum or difference used in a later block of the
//!   loop where its operands are used as well gets its own copy there (one
//!   arithmetic instruction instead of a register held across the blocks between);
//! - *park*: a vector that other blocks use only in cold blocks (the work of lanes
//!   leaving a divergent loop, which runs in a few iterations only) is stored to a
//!   stack slot where it is defined and loaded in the cold blocks, instead of held
//!   in a register across the test that decides whether they run.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    self, Block, Inst, InstBuilder, Opcode, StackSlotData, StackSlotKind, Value, ValueDef,
};
use cranelift_codegen::loop_analysis::LoopAnalysis;

/// Vectors a loop must carry around its back edge before values are recomputed
/// rather than held: half the registers (width 8's `mandelbrot` carries six and
/// runs 5% slower with the copies; width 16's carries nine, its mask packed by
/// `mask_pack`, and runs 7% faster with them).
const RECOMPUTE_MIN_CARRIED: usize = 8;

/// A loop with no loop inside it: its header and its blocks in layout order.
pub(super) struct InnermostLoop {
    pub header: Block,
    pub blocks: Vec<Block>,
    /// The same blocks as a set, for membership tests.
    pub inside: HashSet<Block>,
}

impl InnermostLoop {
    /// How many vectors the loop carries around its back edge (the header's vector
    /// parameters): what decides whether registers are short.
    pub fn carried_vectors(&self, func: &ir::Function) -> usize {
        func.dfg
            .block_params(self.header)
            .iter()
            .filter(|v| func.dfg.value_type(**v).is_vector())
            .count()
    }
}

/// The dominator tree of `func` and its innermost loops, which both loop passes
/// work on.
pub(super) fn innermost_loops(func: &ir::Function) -> (DominatorTree, Vec<InnermostLoop>) {
    let cfg = ControlFlowGraph::with_function(func);
    let domtree = DominatorTree::with_function(func, &cfg);
    let mut la = LoopAnalysis::new();
    la.compute(func, &cfg, &domtree);
    let loops: Vec<_> = la.loops().collect();
    let innermost = loops
        .iter()
        .filter(|&&lp| {
            !loops
                .iter()
                .any(|&c| c != lp && la.loop_parent(c) == Some(lp))
        })
        .map(|&lp| {
            let blocks: Vec<Block> = func
                .layout
                .blocks()
                .filter(|&b| la.is_in_loop(b, lp))
                .collect();
            InnermostLoop {
                header: la.loop_header(lp),
                inside: blocks.iter().copied().collect(),
                blocks,
            }
        })
        .collect();
    (domtree, innermost)
}

/// Applies the moves to the innermost divergent loops of `func` (see the module
/// comment): those with cold blocks, where lanes leave (`lower::masked`).
pub(crate) fn relieve_loops(func: &mut ir::Function) {
    if !func.layout.blocks().any(|b| func.layout.is_cold(b)) {
        return;
    }
    let (domtree, loops) = innermost_loops(func);
    let value_blocks = value_blocks(func);
    for lp in loops {
        if !lp.blocks.iter().any(|&b| func.layout.is_cold(b)) {
            continue;
        }
        // Copies cost an instruction each; worth it only when the registers are short.
        let carried = lp.carried_vectors(func);
        let InnermostLoop {
            header,
            blocks,
            inside,
        } = lp;
        if carried > RECOMPUTE_MIN_CARRIED {
            recompute(func, &domtree, &blocks);
        }
        hoist(func, &domtree, &blocks, &inside, header, &value_blocks);
        park(func, &blocks, &value_blocks);
    }
}

/// The block defining `v`.
pub(super) fn def_block(func: &ir::Function, v: Value) -> Option<Block> {
    match func.dfg.value_def(v) {
        ValueDef::Result(i, _) => func.layout.inst_block(i),
        ValueDef::Param(b, _) => Some(b),
        _ => None,
    }
}

/// Every instruction of `blocks` using each value (once per instruction).
fn users(func: &ir::Function, blocks: &[Block]) -> HashMap<Value, Vec<Inst>> {
    let mut u: HashMap<Value, Vec<Inst>> = HashMap::new();
    for &b in blocks {
        for inst in func.layout.block_insts(b) {
            let mut seen: Vec<Value> = Vec::new();
            for v in func.dfg.inst_values(inst) {
                if !seen.contains(&v) {
                    seen.push(v);
                    u.entry(v).or_default().push(inst);
                }
            }
        }
    }
    u
}

/// The blocks using each value (computed once per function: the moves inside one
/// loop do not change which values blocks outside it use).
fn value_blocks(func: &ir::Function) -> HashMap<Value, Vec<Block>> {
    let mut out: HashMap<Value, Vec<Block>> = HashMap::new();
    for b in func.layout.blocks() {
        for i in func.layout.block_insts(b) {
            for v in func.dfg.inst_values(i) {
                let bs = out.entry(v).or_default();
                if bs.last() != Some(&b) {
                    bs.push(b);
                }
            }
        }
    }
    out
}

/// Whether a block outside `inside` uses `v` (it is live beyond the loop).
fn used_outside(
    value_blocks: &HashMap<Value, Vec<Block>>,
    v: Value,
    inside: &HashSet<Block>,
) -> bool {
    value_blocks
        .get(&v)
        .is_some_and(|bs| bs.iter().any(|b| !inside.contains(b)))
}

/// The *recompute* move (see the module comment).
fn recompute(func: &mut ir::Function, domtree: &DominatorTree, blocks: &[Block]) {
    let u = users(func, blocks);
    for &a in blocks {
        let insts: Vec<Inst> = func.layout.block_insts(a).collect();
        for inst in insts {
            if !matches!(
                func.dfg.insts[inst].opcode(),
                Opcode::Fmul | Opcode::Fadd | Opcode::Fsub
            ) {
                continue;
            }
            let v = func.dfg.first_result(inst);
            if !func.dfg.value_type(v).is_vector() {
                continue;
            }
            let args: Vec<Value> = func.dfg.inst_args(inst).to_vec();
            let Some(uses) = u.get(&v) else {
                continue;
            };
            // Later blocks using `v` in which every operand is used too.
            let mut by_block: HashMap<Block, Vec<Inst>> = HashMap::new();
            for &ui in uses {
                let Some(b) = func.layout.inst_block(ui) else {
                    continue;
                };
                if b == a {
                    continue;
                }
                // Each operand is used by another instruction in `b` or in a block
                // `b` dominates: live where the copy goes anyway.
                let ok = args.iter().all(|x| {
                    u.get(x).is_some_and(|xs| {
                        xs.iter().any(|&xi| {
                            xi != ui
                                && func
                                    .layout
                                    .inst_block(xi)
                                    .is_some_and(|xb| domtree.block_dominates(b, xb))
                        })
                    })
                });
                if !ok || func.dfg.insts[ui].opcode().is_branch() {
                    continue;
                }
                by_block.entry(b).or_default().push(ui);
            }
            for (b, uis) in by_block {
                // Right before the first use in `b` (layout order).
                let first = func
                    .layout
                    .block_insts(b)
                    .find(|i| uis.contains(i))
                    .expect("a use in the block");
                let copy = func.dfg.clone_inst(inst);
                func.layout.insert_inst(copy, first);
                let c = func.dfg.first_result(copy);
                for ui in uis {
                    func.dfg.map_inst_values(ui, |x| if x == v { c } else { x });
                }
            }
        }
    }
}

/// The *hoist* move (see the module comment).
fn hoist(
    func: &mut ir::Function,
    domtree: &DominatorTree,
    blocks: &[Block],
    inside: &HashSet<Block>,
    header: Block,
    value_blocks: &HashMap<Value, Vec<Block>>,
) {
    let u = users(func, blocks);
    for &b in blocks {
        if b == header {
            continue;
        }
        let Some(a) = domtree.idom(b) else {
            continue;
        };
        if !inside.contains(&a) {
            continue;
        }
        let Some(term) = func.layout.last_inst(a) else {
            continue;
        };
        let insts: Vec<Inst> = func.layout.block_insts(b).collect();
        for inst in insts {
            if !matches!(
                func.dfg.insts[inst].opcode(),
                Opcode::Band | Opcode::Bor | Opcode::Bnot
            ) {
                continue;
            }
            let v = func.dfg.first_result(inst);
            if !func.dfg.value_type(v).is_vector() {
                continue;
            }
            let args: Vec<Value> = func.dfg.inst_args(inst).to_vec();
            // Available at the end of `a`: defined in `a` or in a block dominating it.
            let available = args.iter().all(|x| {
                def_block(func, *x).is_some_and(|d| d == a || domtree.block_dominates(d, a))
            });
            if !available {
                continue;
            }
            // Some operand dies here: used only in `a` and by this instruction.
            let dies = args.iter().any(|x| {
                !used_outside(value_blocks, *x, inside)
                    && u.get(x).is_some_and(|xs| {
                        xs.iter()
                            .all(|&xi| xi == inst || func.layout.inst_block(xi) == Some(a))
                    })
            });
            if !dies {
                continue;
            }
            // Right after the last operand defined in `a` (else before its branch).
            let last_def = func
                .layout
                .block_insts(a)
                .rev()
                .find(|&i| func.dfg.inst_results(i).iter().any(|r| args.contains(r)));
            func.layout.remove_inst(inst);
            match last_def.and_then(|d| func.layout.next_inst(d)) {
                Some(next) => func.layout.insert_inst(inst, next),
                None => func.layout.insert_inst(inst, term),
            }
        }
    }
}

/// The *park* move (see the module comment).
fn park(func: &mut ir::Function, blocks: &[Block], value_blocks: &HashMap<Value, Vec<Block>>) {
    let u = users(func, blocks);
    let mut vals: Vec<(Value, Block, Inst)> = Vec::new();
    for &a in blocks {
        if func.layout.is_cold(a) {
            continue;
        }
        for inst in func.layout.block_insts(a) {
            for &v in func.dfg.inst_results(inst) {
                if !func.dfg.value_type(v).is_vector() {
                    continue;
                }
                let Some(uses) = u.get(&v) else {
                    continue;
                };
                let mut cold = false;
                let mut hot_elsewhere = false;
                for &ui in uses {
                    match func.layout.inst_block(ui) {
                        Some(b) if b == a => {}
                        Some(b) if func.layout.is_cold(b) => cold = true,
                        _ => hot_elsewhere = true,
                    }
                }
                if cold && !hot_elsewhere {
                    vals.push((v, a, inst));
                }
            }
        }
    }
    // Uses outside the loop keep the register (they are not in `u`).
    let inside: HashSet<Block> = blocks.iter().copied().collect();
    vals.retain(|(v, ..)| !used_outside(value_blocks, *v, &inside));
    let flags = ir::MemFlagsData::trusted();
    for (v, a, def) in vals {
        let ty = func.dfg.value_type(v);
        let slot = func.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            ty.bytes(),
            4,
        ));
        let mut pos = FuncCursor::new(func).at_inst(def);
        pos.next_inst();
        let addr = pos.ins().stack_addr(ir::types::I64, slot, 0);
        pos.ins().store(flags, v, addr, 0);
        let mut loaded: HashMap<Block, Value> = HashMap::new();
        for &ui in &u[&v] {
            let Some(b) = func.layout.inst_block(ui) else {
                continue;
            };
            if b == a {
                continue;
            }
            let x = match loaded.get(&b) {
                Some(x) => *x,
                None => {
                    let first = func.layout.first_inst(b).expect("block has a terminator");
                    let mut p = FuncCursor::new(func).at_inst(first);
                    let addr = p.ins().stack_addr(ir::types::I64, slot, 0);
                    let x = p.ins().load(ty, flags, addr, 0);
                    loaded.insert(b, x);
                    x
                }
            };
            func.dfg.map_inst_values(ui, |y| if y == v { x } else { y });
        }
    }
}
