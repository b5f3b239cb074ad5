//! The masked body's lane masks packed into one vector register.
//!
//! A lane mask is W/4 chunks of `i32x4` (one all-ones or all-zero 32-bit lane per
//! work-item), the layout the lanes' values need for blends and masked accesses.
//! At width 16 that is four registers per mask, and a divergent loop carries its
//! header's pending mask around the back edge next to its values: clbench's
//! `mandelbrot` (12 vectors of `zr`, `zi` and mask, plus temporaries) no longer fits
//! the sixteen registers, and every "some lane leaves" / "some lane stays" test ORs
//! four chunks first. The same mask fits one register with a byte per lane
//! (`i8x16`, at width 8 `i16x8`), where `and`, `or` and the tests are one
//! instruction each.
//!
//! So the masked body keeps its pending masks packed (one cell per block), and a mask
//! operation with an operand that came from a packed mask (`Tr::mask_and` and the
//! others in `value.rs`) works on the packed forms. Chunks are unpacked for the
//! code that needs lane layout; unpacking is pure, so the mid-end drops it where only
//! the packed form is used, and places it in the cold blocks where only they use it.
//!
//! Two maps connect the forms, each valid wherever its key is available because the
//! key's definition needs the value it maps to:
//! - `chunks_of`: a packed value made by packing chunks -> those chunks;
//! - `packed_of`: chunks made by unpacking a packed value -> that value.

use std::collections::HashMap;

use cranelift_codegen::ir::{types, InstBuilder, Type, Value};

use super::state::Cell;
use super::value::little;
use super::Tr;

/// Packed forms of the masks of the body being emitted (see the module comment).
#[derive(Default)]
pub(crate) struct PackedMasks {
    /// The packed type, while the masked body keeps its masks packed.
    ty: Option<Type>,
    /// Packed value -> the chunks it was packed from.
    chunks_of: HashMap<Value, Vec<Value>>,
    /// Chunks -> the packed value they were unpacked from.
    packed_of: HashMap<Vec<Value>, Value>,
}

/// The packed type of a mask of `chunks` `i32x4` chunks: a lane per byte (4 chunks)
/// or per 16 bits (2 chunks); none for a single chunk (already one register) or more
/// than 4 (more than one register either way).
fn packed_type(chunks: usize) -> Option<Type> {
    match chunks {
        2 => Some(types::I16X8),
        4 => Some(types::I8X16),
        _ => None,
    }
}

impl Tr<'_, '_> {
    /// Starts keeping masks packed (in the masked body), when the width has a packed
    /// form.
    pub(crate) fn begin_packed_masks(&mut self) {
        self.packed = PackedMasks {
            ty: packed_type((self.w / 4) as usize),
            ..Default::default()
        };
    }

    /// Stops keeping masks packed.
    pub(crate) fn end_packed_masks(&mut self) {
        self.packed = PackedMasks::default();
    }

    /// The packed value `m` was unpacked from, if any: the mask operations work on
    /// that instead of the chunks.
    pub(crate) fn packed_form(&self, m: &[Value]) -> Option<Value> {
        self.packed.ty?;
        self.packed.packed_of.get(m).copied()
    }

    /// Mask `m` packed: the value it was unpacked from, a constant for a constant
    /// mask, else packed now.
    pub(crate) fn pack_mask(&mut self, m: &[Value]) -> Value {
        let ty = self
            .packed
            .ty
            .expect("masks are packed only while the masked body packs them");
        if let Some(p) = self.packed.packed_of.get(m) {
            return *p;
        }
        if self.is_full_const(m) {
            return self.vconst_bytes(ty, vec![0xff; 16]);
        }
        if m.iter().all(|v| self.is_zero_mask_const(*v)) {
            return self.vconst_bytes(ty, vec![0; 16]);
        }
        let mut level: Vec<Value> = m
            .iter()
            .map(|&v| {
                if self.b.func.dfg.value_type(v) == types::I32X4 {
                    v
                } else {
                    self.b.ins().bitcast(types::I32X4, little(), v)
                }
            })
            .collect();
        while level.len() > 1 {
            level = level
                .chunks(2)
                .map(|p| self.b.ins().snarrow(p[0], p[1]))
                .collect();
        }
        let p = level[0];
        self.packed.chunks_of.insert(p, m.to_vec());
        p
    }

    /// Packed mask `p` as `i32x4` chunks: those it was packed from, else unpacked now
    /// (pure instructions: the mid-end keeps them only where they are used).
    pub(crate) fn unpack_mask(&mut self, p: Value) -> Vec<Value> {
        if let Some(m) = self.packed.chunks_of.get(&p) {
            return m.clone();
        }
        let mut level = vec![p];
        while self.b.func.dfg.value_type(level[0]) != types::I32X4 {
            level = level
                .iter()
                .flat_map(|&v| [self.b.ins().swiden_low(v), self.b.ins().swiden_high(v)])
                .collect();
        }
        self.packed.packed_of.insert(level.clone(), p);
        level
    }

    /// A packed mask operation: `op` on the packed forms of `a` and `b`, when one of
    /// them came from a packed mask (packing the other costs less than working on
    /// every chunk and unpacking later); the result as chunks.
    pub(crate) fn packed_mask_op(
        &mut self,
        a: &[Value],
        b: &[Value],
        op: fn(&mut Self, Value, Value) -> Value,
    ) -> Option<Vec<Value>> {
        if self.packed_form(a).is_none() && self.packed_form(b).is_none() {
            return None;
        }
        let pa = self.pack_mask(a);
        let pb = self.pack_mask(b);
        let r = op(self, pa, pb);
        Some(self.unpack_mask(r))
    }

    /// The cells of one block's pending mask: one packed cell while masks are packed,
    /// else a cell per chunk.
    pub(crate) fn new_mask_cells(&mut self, cold: bool) -> Vec<Cell> {
        let ty = self.mask_cell_type();
        let n = if self.packed.ty.is_some() {
            1
        } else {
            (self.w / 4) as usize
        };
        (0..n)
            .map(|_| {
                if cold {
                    self.new_cold_cell(ty)
                } else {
                    self.new_cell(ty)
                }
            })
            .collect()
    }

    /// The type of the pending masks' cells: packed, or `i32x4` chunks.
    fn mask_cell_type(&self) -> Type {
        self.packed.ty.unwrap_or(types::I32X4)
    }

    /// Mask `m` (chunks) as the pending masks' cells hold it: packed, or as is.
    fn in_cell_form(&mut self, m: &[Value]) -> Vec<Value> {
        if self.packed.ty.is_some() {
            vec![self.pack_mask(m)]
        } else {
            m.to_vec()
        }
    }

    /// The empty mask in the cells' form.
    pub(crate) fn mask_cell_zero(&mut self) -> Value {
        let ty = self.mask_cell_type();
        self.vconst_bytes(ty, vec![0; 16])
    }

    /// A pending mask's value, as chunks.
    pub(crate) fn read_mask_cells(&mut self, cells: &[Cell]) -> Vec<Value> {
        let vals: Vec<Value> = cells.iter().map(|c| self.read_cell(*c)).collect();
        if self.packed.ty.is_some() {
            self.unpack_mask(vals[0])
        } else {
            vals
        }
    }

    /// i8: some lane of a pending mask is set (without unpacking it).
    pub(crate) fn mask_cells_any(&mut self, cells: &[Cell]) -> Value {
        if self.packed.ty.is_some() {
            let p = self.read_cell(cells[0]);
            return self.b.ins().vany_true(p);
        }
        let m = self.read_mask_cells(cells);
        self.mask_any(&m)
    }

    /// Sets a pending mask to the chunks `m`.
    pub(crate) fn write_mask_cells(&mut self, cells: &[Cell], m: &[Value]) {
        for (c, v) in cells.iter().zip(self.in_cell_form(m)) {
            self.write_cell(*c, v);
        }
    }

    /// ORs the lanes `em` (chunks) into a pending mask; `None`: every lane.
    pub(crate) fn or_into_mask_cells(&mut self, cells: &[Cell], em: Option<&[Value]>) {
        let ty = self.mask_cell_type();
        let parts: Vec<Option<Value>> = match em {
            None => vec![None; cells.len()],
            Some(m) => self.in_cell_form(m).into_iter().map(Some).collect(),
        };
        for (cell, part) in cells.iter().zip(parts) {
            let new = match part {
                None => self.vconst_bytes(ty, vec![0xff; 16]),
                Some(x) => {
                    let old = self.read_cell(*cell);
                    if self.is_zero_mask_const(old) {
                        x
                    } else {
                        self.b.ins().bor(old, x)
                    }
                }
            };
            self.write_cell(*cell, new);
        }
    }
}
