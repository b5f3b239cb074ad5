//! After the mid-end: loop-invariant vectors of a crowded innermost loop live in
//! stack slots, reloaded at each use inside the loop.
//!
//! A divergent loop of a wide sub-group carries many vectors around its back edge
//! (each chunk of each phi, each chunk of the execution mask) and reads a few values
//! computed before it (clbench `mandelbrot`: the pixel's `cr` chunks and the row's
//! `ci`). With more vectors live than the sixteen registers, regalloc2 spills the
//! invariants, but splits their live ranges so that the piece inside the loop ends
//! in a register: every iteration then stores the unchanged value back to its slot
//! on the back edge, and reloads it where it is used. Stored once where they are
//! defined and loaded by each use (a load that the using instruction folds into a
//! memory operand when it is its only use in the block), they cost one load per use
//! and nothing on the back edge.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{
    self, Block, InstBuilder, StackSlotData, StackSlotKind, Value, ValueDef,
};

use super::loop_pressure::{def_block, innermost_loops, InnermostLoop};

/// Vectors a loop may keep in registers (carried and invariant together) before
/// its invariants go to memory: sixteen registers, less room for temporaries.
/// (Width 16's `mandelbrot` carried twelve and read five invariants: 12% fewer
/// instructions with all five in memory than with none. With its mask packed
/// (`mask_pack`) it carries nine, and is still 3% faster with them in memory than
/// with a limit of 14 that keeps them in registers.)
const LIMIT: usize = 10;

/// Moves the invariant vectors of crowded innermost loops to stack slots (see the
/// module comment); returns how many values moved.
pub(crate) fn spill_loop_invariants(func: &mut ir::Function) -> usize {
    if !func.layout.blocks().any(|b| func.layout.is_cold(b)) {
        return 0;
    }
    let (_, loops) = innermost_loops(func);
    let mut moved = 0;
    for lp in loops {
        let carried = lp.carried_vectors(func);
        let InnermostLoop {
            header,
            blocks,
            inside,
        } = lp;
        // Invariant vectors used inside, with their use counts.
        let mut uses: HashMap<Value, usize> = HashMap::new();
        for &b in &blocks {
            for inst in func.layout.block_insts(b) {
                for v in func.dfg.inst_values(inst) {
                    let v = func.dfg.resolve_aliases(v);
                    if !func.dfg.value_type(v).is_vector() {
                        continue;
                    }
                    if def_block(func, v).is_some_and(|d| !inside.contains(&d)) {
                        *uses.entry(v).or_default() += 1;
                    }
                }
            }
        }
        // Constants are copied into each block by `remat` already.
        uses.retain(|v, _| match func.dfg.value_def(*v) {
            ValueDef::Result(i, _) => func.dfg.insts[i].opcode() != ir::Opcode::Vconst,
            _ => true,
        });
        // Only divergent loops (lanes leave through cold exit-edge blocks): the
        // ones measured, whose masks add to what they carry.
        let divergent = blocks.iter().any(|&b| func.layout.is_cold(b));
        if !divergent || carried + uses.len() <= LIMIT {
            continue;
        }
        let mut order: Vec<(usize, Value)> = uses.iter().map(|(v, n)| (*n, *v)).collect();
        order.sort_unstable();
        let n = (carried + uses.len() - LIMIT).min(order.len());
        let chosen: Vec<Value> = order[..n].iter().map(|&(_, v)| v).collect();
        spill(func, &chosen, header, &inside);
        moved += n;
    }
    moved
}

/// Stores each of `vals` to its place in a new slot after its definition and
/// replaces its uses in `inside` with loads right before them, addressed from one
/// slot address computed at the start of the loop's `header` (an address register
/// plus an offset, which a using instruction folds into its memory operand).
fn spill(func: &mut ir::Function, vals: &[Value], header: Block, inside: &HashSet<Block>) {
    let size: u32 = vals.iter().map(|v| func.dfg.value_type(*v).bytes()).sum();
    let slot =
        func.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, size, 4));
    let flags = ir::MemFlagsData::trusted();
    let first = func
        .layout
        .first_inst(header)
        .expect("block has a terminator");
    let base = FuncCursor::new(func)
        .at_inst(first)
        .ins()
        .stack_addr(ir::types::I64, slot, 0);
    let mut offset = 0i32;
    let mut blocks: Vec<Block> = inside.iter().copied().collect();
    blocks.sort_unstable();
    for &v in vals {
        let ty = func.dfg.value_type(v);
        // The store: after the defining instruction, or first in the parameter's block.
        let mut pos = match func.dfg.value_def(v) {
            ValueDef::Result(i, _) => {
                let mut p = FuncCursor::new(func).at_inst(i);
                p.next_inst();
                p
            }
            ValueDef::Param(b, _) => {
                let p = FuncCursor::new(func);
                let first = p.func.layout.first_inst(b).expect("block has a terminator");
                p.at_inst(first)
            }
            _ => continue,
        };
        let addr = pos.ins().stack_addr(ir::types::I64, slot, offset);
        pos.ins().store(flags, v, addr, 0);
        for &b in &blocks {
            let insts: Vec<ir::Inst> = func.layout.block_insts(b).collect();
            for inst in insts {
                let same: Vec<Value> = func
                    .dfg
                    .inst_values(inst)
                    .filter(|x| func.dfg.resolve_aliases(*x) == v)
                    .collect();
                if same.is_empty() {
                    continue;
                }
                let x = FuncCursor::new(func)
                    .at_inst(inst)
                    .ins()
                    .load(ty, flags, base, offset);
                func.dfg
                    .map_inst_values(inst, |y| if same.contains(&y) { x } else { y });
            }
        }
        offset += ty.bytes() as i32;
    }
}
