//! After the mid-end: values that sit in a vector-math call's stack slot are read
//! again from the slot after later calls instead of living across them in registers.
//!
//! A `vmath` call (`lower::vmath`) stores its operands to a slot of its own, the
//! routine writes the results to the slot's last region, and the results are loaded
//! back. Every call clobbers all sixteen vector registers (System V), so a vector
//! value used after a call is spilled before it and reloaded after it: the operands
//! (`x` in `sin(x) * exp(-x * x) + sqrt(x)`) and the first call's results, which wait
//! for the second call. Both are already in memory that nothing writes again (the
//! operand region is written only before the call, the result region only by the
//! routine), so a use after a call loads them from there: the spill store goes away
//! and the results of a call are loaded where they are used (clbench `math`: 8 fewer
//! stores and 4 fewer loads per sub-group).
//!
//! A slot qualifies when exactly one call uses its address and every other use of its
//! address is the address of a load or store; all its stores are in the call's block
//! before the call, all its result loads after it. A value `v` is then "in the slot"
//! from its store (operands) or from the call (results) on, at every point that point
//! dominates. A use of `v` is rewritten to a fresh load when a call lies between: in
//! the same block, strictly between them; across blocks, after the availability point
//! in its block or before the use in the use's block (other paths are left alone: a
//! missed rewrite costs a spill, never correctness).

use std::collections::{HashMap, HashSet};

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    self, types, Block, FuncRef, Inst, InstBuilder, InstructionData, Opcode, StackSlot, Type, Value,
};

/// Where a value can be loaded from: slot, offset, type, and the instruction after
/// which the slot holds it.
#[derive(Clone, Copy)]
struct InSlot {
    slot: StackSlot,
    offset: i32,
    ty: Type,
    from: Inst,
}

/// The stack slot and offset of an address defined by `stack_addr`.
fn slot_addr(func: &ir::Function, v: Value) -> Option<(StackSlot, i32)> {
    let inst = func.dfg.value_def(v).inst()?;
    match func.dfg.insts[inst] {
        InstructionData::StackAddr {
            opcode: Opcode::StackAddr,
            stack_slot,
            offset,
        } => Some((stack_slot, offset.into())),
        _ => None,
    }
}

/// Rewrites uses after calls of values held in the slots of calls to `vmath` (the
/// function references for which `is_vmath` holds); see the module doc.
pub(crate) fn remat_from_slots(func: &mut ir::Function, is_vmath: &dyn Fn(FuncRef) -> bool) {
    // The e-graph leaves aliases (of removed block parameters, ...): uses must name
    // the values themselves to be found.
    func.dfg.resolve_all_aliases();
    let facts = find_facts(func, is_vmath);
    if facts.is_empty() {
        return;
    }
    let cfg = ControlFlowGraph::with_function(func);
    let domtree = DominatorTree::with_function(func, &cfg);
    // Position of every instruction in its block, and each block's call positions.
    let mut pos: HashMap<Inst, (Block, usize)> = HashMap::new();
    let mut calls: HashMap<Block, Vec<usize>> = HashMap::new();
    for block in func.layout.blocks() {
        for (i, inst) in func.layout.block_insts(block).enumerate() {
            pos.insert(inst, (block, i));
            if func.dfg.insts[inst].opcode().is_call() {
                calls.entry(block).or_default().push(i);
            }
        }
    }
    let call_between = |block: Block, lo: usize, hi: usize| {
        calls
            .get(&block)
            .is_some_and(|c| c.iter().any(|&i| lo < i && i < hi))
    };
    // Uses of each fact's value, in layout order.
    let mut uses: HashMap<Value, Vec<Inst>> = HashMap::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            for v in func.dfg.inst_values(inst) {
                if facts.contains_key(&v) {
                    let u = uses.entry(v).or_default();
                    if u.last() != Some(&inst) {
                        u.push(inst);
                    }
                }
            }
        }
    }
    let mut dead_loads: Vec<Inst> = Vec::new();
    for (&v, fact) in &facts {
        let Some(us) = uses.get(&v) else { continue };
        let (fb, fi) = pos[&fact.from];
        // The fresh load per block, and where it was made.
        let mut fresh: HashMap<Block, (Value, usize)> = HashMap::new();
        let mut kept = false;
        for &u in us {
            let (ub, ui) = pos[&u];
            let crosses = if ub == fb {
                ui > fi && call_between(fb, fi, ui)
            } else {
                domtree.dominates(fact.from, u, &func.layout)
                    && (call_between(fb, fi, usize::MAX) || call_between(ub, 0, ui))
            };
            if !crosses || u == fact.from {
                kept = true;
                continue;
            }
            let reuse = fresh
                .get(&ub)
                .filter(|(_, at)| !call_between(ub, *at, ui))
                .map(|(nv, _)| *nv);
            let nv = match reuse {
                Some(nv) => nv,
                None => {
                    let mut cur = FuncCursor::new(func).at_inst(u);
                    let nv = cur
                        .ins()
                        .stack_load(types::I64, fact.ty, fact.slot, fact.offset);
                    // The fresh load sits just before `u`: same position for the
                    // call tests (no call between them).
                    fresh.insert(ub, (nv, ui));
                    nv
                }
            };
            func.dfg.map_inst_values(u, |x| if x == v { nv } else { x });
        }
        if !kept {
            if let Some(inst) = func.dfg.value_def(v).inst() {
                if func.dfg.insts[inst].opcode() == Opcode::Load {
                    dead_loads.push(inst);
                }
            }
        }
    }
    if dead_loads.is_empty() {
        return;
    }
    let mut used: HashSet<Value> = HashSet::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            used.extend(func.dfg.inst_values(inst));
        }
    }
    for inst in dead_loads {
        if !used.contains(&func.dfg.first_result(inst)) {
            func.layout.remove_inst(inst);
        }
    }
}

/// The values held in qualifying slots (see the module doc).
fn find_facts(func: &ir::Function, is_vmath: &dyn Fn(FuncRef) -> bool) -> HashMap<Value, InSlot> {
    // Per slot: the calls using its address, and whether any other use disqualifies it.
    let mut call_of: HashMap<StackSlot, Vec<Inst>> = HashMap::new();
    let mut bad: HashSet<StackSlot> = HashSet::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            let data = &func.dfg.insts[inst];
            let addr_ok = match *data {
                InstructionData::Load { arg, .. } => Some(arg),
                InstructionData::Store { args, .. } => Some(args[1]),
                _ => None,
            };
            let vmath_call =
                matches!(*data, InstructionData::Call { func_ref, .. } if is_vmath(func_ref));
            for (k, v) in func.dfg.inst_values(inst).enumerate() {
                let Some((slot, _)) = slot_addr(func, v) else {
                    continue;
                };
                if vmath_call {
                    let c = call_of.entry(slot).or_default();
                    if c.last() != Some(&inst) {
                        c.push(inst);
                    }
                } else if addr_ok != Some(v)
                    || matches!(*data, InstructionData::Store { .. } if k == 0)
                {
                    bad.insert(slot);
                }
            }
        }
    }
    let mut facts = HashMap::new();
    for (slot, cs) in call_of {
        if bad.contains(&slot) || cs.len() != 1 {
            continue;
        }
        let call = cs[0];
        let args = func.dfg.inst_args(call);
        // (a, b, out, n): the results start at `out`.
        let Some((_, out_off)) = args.get(2).and_then(|v| slot_addr(func, *v)) else {
            continue;
        };
        let Some(call_block) = func.layout.inst_block(call) else {
            continue;
        };
        let mut after_call = false;
        let mut ok = true;
        let mut found: Vec<(Value, InSlot)> = Vec::new();
        for block in func.layout.blocks() {
            for inst in func.layout.block_insts(block) {
                if inst == call {
                    after_call = true;
                    continue;
                }
                let data = &func.dfg.insts[inst];
                let (addr, stored) = match *data {
                    InstructionData::Load { arg, .. } => (arg, None),
                    InstructionData::Store { args, .. } => (args[1], Some(args[0])),
                    _ => continue,
                };
                let Some((s, base)) = slot_addr(func, addr) else {
                    continue;
                };
                if s != slot {
                    continue;
                }
                let offset = base + data.load_store_offset().unwrap_or(0);
                match stored {
                    Some(v) => {
                        // Operands: stored before the call, in its block.
                        if block != call_block || after_call || offset >= out_off {
                            ok = false;
                        }
                        let ty = func.dfg.value_type(v);
                        found.push((
                            v,
                            InSlot {
                                slot,
                                offset,
                                ty,
                                from: inst,
                            },
                        ));
                    }
                    None => {
                        let r = func.dfg.first_result(inst);
                        if offset >= out_off {
                            // Results: loaded after the call, in its block.
                            if block != call_block || !after_call {
                                ok = false;
                            }
                            let ty = func.dfg.value_type(r);
                            found.push((
                                r,
                                InSlot {
                                    slot,
                                    offset,
                                    ty,
                                    from: call,
                                },
                            ));
                        }
                    }
                }
            }
            if block == call_block {
                // Blocks after the call's block in layout order are not "after" it.
                after_call = false;
            }
        }
        if ok {
            for (v, f) in found {
                // A value stored twice (two slots) keeps the first.
                facts.entry(v).or_insert(f);
            }
        }
    }
    facts
}
