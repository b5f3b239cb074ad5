//! Where a masked body keeps its control state: the pending mask of every block,
//! the phi accumulators and the loops' live-out accumulators.
//!
//! Small kernels keep each piece in a frontend variable (Cranelift's SSA
//! construction turns them into registers). That construction keeps a per-block
//! table for every variable and threads a variable through every block between a
//! write and a read with a block parameter, so its cost grows with variables times
//! blocks: a kernel with thousands of blocks took gigabytes. Above a budget the
//! state lives in memory instead (a stack slot, or the sub-group's scratch area in
//! kernels with barriers, where it then survives a barrier without being saved):
//! one load per read and one store per write, linear in the kernel's size.

use cranelift_codegen::ir::{self, types, InstBuilder, Value};
use cranelift_frontend::Variable;

use super::Tr;

/// Cells times linear positions of a masked body above which its control state
/// lives in memory (a body of about 700 blocks at W = 8; the SSA tables then take
/// some tens of megabytes, and a switch with that many cases, whose masks are all
/// pending at once, some ten thousand block parameters per case).
pub(crate) const STATE_VAR_BUDGET: usize = 1 << 20;

/// One piece of control state: a variable or a slot of the state area.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Cell {
    Var(Variable, ir::Type),
    /// Byte offset in the state area.
    Mem(u32, ir::Type),
    /// A stack slot of its own (kernels without barriers): state that a loop carries
    /// but only its exits touch, kept out of the loop's registers.
    Stack(ir::StackSlot, ir::Type),
}

impl Cell {
    pub fn ty(&self) -> ir::Type {
        match self {
            Cell::Var(_, t) | Cell::Mem(_, t) | Cell::Stack(_, t) => *t,
        }
    }

    /// The variable, for cells that are one (what a barrier must save).
    pub fn var(&self) -> Option<Variable> {
        match self {
            Cell::Var(v, _) => Some(*v),
            Cell::Mem(..) | Cell::Stack(..) => None,
        }
    }
}

/// The state area of the body being emitted.
#[derive(Debug, Default)]
pub(crate) struct StateArea {
    /// Whether new cells go to memory.
    pub in_memory: bool,
    /// Address of the area (valid in the whole body).
    base: Option<Value>,
    /// Bytes allocated in the current body.
    next: u32,
    /// The largest area of any body of the kernel.
    pub max_bytes: u32,
    /// The stack slot holding the area (kernels without barriers).
    pub slot: Option<ir::StackSlot>,
    /// Instructions giving the area's offset in a sub-group's scratch (kernels with
    /// barriers): set once the save area's size is known.
    pub offset_insts: Vec<ir::Inst>,
}

impl Tr<'_, '_> {
    /// Starts the control state of a body with about `cells` cells over `positions`
    /// blocks: in memory when variables would be too costly. Emitted where the body
    /// starts (the address of the area must dominate the body).
    pub(crate) fn begin_state(&mut self, cells: usize, positions: usize) {
        let in_memory = cells.saturating_mul(positions) > STATE_VAR_BUDGET
            || (self.huge && positions > 0)
            || std::env::var_os("CRANECL_STATE_IN_MEMORY").is_some_and(|v| v != "0");
        self.state_area.in_memory = in_memory;
        self.state_area.next = 0;
        self.state_area.base = None;
        if !in_memory {
            return;
        }
        let base = match self.bctx.as_ref().map(|c| c.sg_base) {
            Some(sg_base) => {
                // Patched to the real offset when the save area is known.
                let off = self.b.ins().iconst(types::I64, 0);
                if let Some(inst) = self.b.func.dfg.value_def(off).inst() {
                    self.state_area.offset_insts.push(inst);
                }
                self.b.ins().iadd(sg_base, off)
            }
            None => {
                let slot = *self.state_area.slot.get_or_insert_with(|| {
                    self.b.create_sized_stack_slot(ir::StackSlotData::new(
                        ir::StackSlotKind::ExplicitSlot,
                        0,
                        4,
                    ))
                });
                self.b.ins().stack_addr(types::I64, slot, 0)
            }
        };
        self.state_area.base = Some(base);
    }

    /// A new cell of type `ty`.
    pub(crate) fn new_cell(&mut self, ty: ir::Type) -> Cell {
        if !self.state_area.in_memory {
            return Cell::Var(self.b.declare_var(ty), ty);
        }
        let a = &mut self.state_area;
        let size = ty.bytes().max(1);
        let off = a.next.next_multiple_of(size.min(16));
        a.next = off + size;
        a.max_bytes = a.max_bytes.max(a.next);
        Cell::Mem(off, ty)
    }

    /// A new cell of type `ty` that is read and written rarely (the exits of a loop):
    /// in a stack slot of its own where nothing else decides (no barrier, whose
    /// sub-groups share the frame, and state not already in memory).
    pub(crate) fn new_cold_cell(&mut self, ty: ir::Type) -> Cell {
        if self.state_area.in_memory || self.bctx.is_some() {
            return self.new_cell(ty);
        }
        let size = ty.bytes().max(1);
        let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            size,
            size.min(16).trailing_zeros() as u8,
        ));
        Cell::Stack(slot, ty)
    }

    /// The value of a cell.
    pub(crate) fn read_cell(&mut self, c: Cell) -> Value {
        match c {
            Cell::Var(v, _) => self.b.use_var(v),
            Cell::Stack(slot, t) => self.b.ins().stack_load(types::I64, t, slot, 0),
            Cell::Mem(off, t) => {
                let base = self.state_base();
                self.b
                    .ins()
                    .load(t, ir::MemFlagsData::trusted(), base, off as i32)
            }
        }
    }

    /// Sets a cell.
    pub(crate) fn write_cell(&mut self, c: Cell, x: Value) {
        match c {
            Cell::Var(v, _) => self.b.def_var(v, x),
            Cell::Stack(slot, _) => {
                self.b.ins().stack_store(types::I64, x, slot, 0);
            }
            Cell::Mem(off, _) => {
                let base = self.state_base();
                self.b
                    .ins()
                    .store(ir::MemFlagsData::trusted(), x, base, off as i32);
            }
        }
    }

    /// Sets a cell to zero.
    pub(crate) fn zero_cell(&mut self, c: Cell) {
        let z = self.zero_scalar(c.ty());
        self.write_cell(c, z);
    }

    fn state_base(&self) -> Value {
        // `begin_state` sets the base before any memory cell exists.
        self.state_area
            .base
            .expect("the state area has a base while memory cells are used")
    }

    /// Sizes the state area once every body is emitted: the stack slot, or the
    /// offset of the area in the scratch of a sub-group after `scratch_used` bytes
    /// (returns the scratch bytes then used).
    pub(crate) fn finish_state(&mut self, scratch_used: u64) -> u64 {
        let bytes = u64::from(self.state_area.max_bytes);
        if let Some(slot) = self.state_area.slot {
            self.b.func.sized_stack_slots[slot].size = bytes as u32;
        }
        if self.state_area.offset_insts.is_empty() {
            return scratch_used;
        }
        let off = scratch_used.next_multiple_of(16);
        for inst in std::mem::take(&mut self.state_area.offset_insts) {
            self.b.func.replace(inst).iconst(types::I64, off as i64);
        }
        off + bytes
    }
}
