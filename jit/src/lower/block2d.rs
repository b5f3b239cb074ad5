//! 2D block loads, stores and prefetches (`cl_intel_subgroup_2d_block_io`,
//! `SPV_INTEL_2d_block_io`): the OpenCL C built-ins (by name, mangled or not) and the
//! SPIR-V instructions share one lowering, a call of the run-time helper
//! [`crate::block2d::cranecl_block2d`] with the sub-group's uniform operands (taken
//! from its first active lane: the spec requires them uniform), the W per-lane
//! private addresses and the mask of active lanes. The helper moves the data (one copy
//! per in-bounds row span); the element-to-lane mapping lives there.

use cranelift_codegen::ir::{self, types, AbiParam, InstBuilder, Value};

use super::block2d_fast;
use super::value::{Elem, Lv};
use super::Tr;
use crate::spirv::{Block2dKind, Block2dShape, Id};
use crate::CompileError;

/// The shape of an `intel_sub_group_2d_block_{read,read_transform,read_transpose,
/// write,prefetch}_<bits>b_<rows>r<cols>x<count>c` built-in, if `name` is one the
/// extension defines.
pub fn builtin_shape(name: &str) -> Option<Block2dShape> {
    let rest = name.strip_prefix("intel_sub_group_2d_block_")?;
    let (kind, rest) = [
        ("read_transform_", Block2dKind::LoadTransform),
        ("read_transpose_", Block2dKind::LoadTranspose),
        ("read_", Block2dKind::Load),
        ("write_", Block2dKind::Store),
        ("prefetch_", Block2dKind::Prefetch),
    ]
    .iter()
    .find_map(|(p, k)| rest.strip_prefix(p).map(|r| (*k, r)))?;
    let (bits, rest) = rest.split_once("b_")?;
    let (rows, rest) = rest.split_once('r')?;
    let (cols, rest) = rest.split_once('x')?;
    let count = rest.strip_suffix('c')?;
    let num = |s: &str| -> Option<u32> {
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()) && !s.starts_with('0'))
            .then(|| s.parse().ok())?
    };
    let esize = match num(bits)? {
        8 => 1,
        16 => 2,
        32 => 4,
        _ => return None,
    };
    let shape = Block2dShape {
        kind,
        esize,
        width: num(cols)?,
        height: num(rows)?,
        count: num(count)?,
    };
    shape.is_supported().then_some(shape)
}

impl Tr<'_, '_> {
    /// A call of a 2D block built-in with the arguments of its OpenCL C prototype:
    /// (base, width, height, pitch, coord[, private pointer]).
    pub fn block2d_call(
        &mut self,
        name: &str,
        shape: Block2dShape,
        args: &[Id],
    ) -> Result<(), CompileError> {
        let n = if shape.kind == Block2dKind::Prefetch {
            5
        } else {
            6
        };
        if args.len() != n {
            return Err(CompileError::malformed(format!(
                "{name} takes {n} arguments, not {}",
                args.len()
            )));
        }
        self.block2d(
            shape,
            [args[0], args[1], args[2], args[3], args[4]],
            args.get(5).copied(),
        )
    }

    /// One 2D block operation: `ops` = base, width, height, pitch, coord.
    pub fn block2d(
        &mut self,
        shape: Block2dShape,
        ops: [Id; 5],
        private: Option<Id>,
    ) -> Result<(), CompileError> {
        let [base, width, height, pitch, coord] = ops;
        let bad =
            |what: &str| CompileError::malformed(format!("2D block {:?}: {what}", shape.kind));
        let base_v = self.get(base)?;
        if base_v.elems.first() != Some(&Elem::I64) {
            return Err(bad("the base is not a pointer"));
        }
        let base_lv = base_v.leaves[0].clone();
        let base = self.first_lane_value(Elem::I64, &base_lv);
        let mut ints = Vec::with_capacity(5);
        for id in [width, height, pitch] {
            let v = self.get(id)?;
            match (v.elems.first(), v.leaves.first()) {
                (Some(Elem::I32), Some(l)) if v.elems.len() == 1 => ints.push(l.clone()),
                _ => return Err(bad("width, height and pitch must be 32-bit integers")),
            }
        }
        let c = self.get(coord)?;
        if c.elems.len() != 2 || c.elems.iter().any(|e| *e != Elem::I32) {
            return Err(bad(
                "the coordinate must be a vector of two 32-bit integers",
            ));
        }
        ints.extend(c.leaves.iter().cloned());
        let ints: Vec<Value> = ints
            .iter()
            .map(|l| self.first_lane_value(Elem::I32, l))
            .collect();
        if shape.kind == Block2dKind::Prefetch {
            // A prefetch is only a hint (the helper ignored it too).
            return Ok(());
        }
        let private_lv = match private {
            Some(p) => {
                let pv = self.get(p)?;
                if pv.elems.first() != Some(&Elem::I64) {
                    return Err(bad("the private operand is not a pointer"));
                }
                Some(pv.leaves[0].clone())
            }
            None => None,
        };
        // The inline path: lanes' private arrays at a constant stride, a mask that can
        // be full, and a plan small enough to inline.
        let inline = match &private_lv {
            Some(Lv::A(p0, stride))
                if self.full_state != Some(false) && self.block2d_stride_ok(&shape, *stride) =>
            {
                block2d_fast::plan(&shape, self.w as usize).map(|plan| {
                    (
                        plan,
                        block2d_fast::Operands {
                            base,
                            ints: ints.clone(),
                            private: *p0,
                            stride: *stride,
                        },
                    )
                })
            }
            _ => None,
        };
        let Some((plan, ops)) = inline else {
            return self.block2d_helper(shape, base, &ints, private_lv.as_ref());
        };
        let mut ok = self.block2d_inside(&shape, &ops);
        if self.full_state != Some(true) && !self.mask.is_empty() {
            let full = self.full_mask();
            ok = self.b.ins().band(ok, full);
        }
        let (fast, slow, join) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(ok, fast, &[], slow, &[]);
        let full_before = self.mask_full;
        self.b.switch_to_block(fast);
        self.block2d_inline(&shape, &plan, &ops);
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(slow);
        self.block2d_helper(shape, base, &ints, private_lv.as_ref())?;
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
        self.mask_full = full_before;
        Ok(())
    }

    /// The call of the run-time helper (any block, any mask).
    fn block2d_helper(
        &mut self,
        shape: Block2dShape,
        base: Value,
        ints: &[Value],
        private: Option<&Lv>,
    ) -> Result<(), CompileError> {
        // The W private addresses, in a stack array.
        let w = self.w;
        let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            8 * w,
            3,
        ));
        let lanes = self.b.ins().stack_addr(types::I64, slot, 0);
        if let Some(pl) = private {
            let addrs = self.lanes_of(Elem::I64, pl);
            let fl = ir::MemFlagsData::trusted();
            for (l, a) in addrs.iter().enumerate() {
                self.b.ins().store(fl, *a, lanes, (8 * l) as i32);
            }
        }
        let mask = self.active_lane_bits();
        let shape_v = self.b.ins().iconst(types::I64, shape.pack() as i64);
        let w_v = self.b.ins().iconst(types::I32, i64::from(w));
        let (i32p, i64p) = (AbiParam::new(types::I32), AbiParam::new(types::I64));
        let f = self.import_fn(
            "cranecl_block2d",
            &[i64p, i64p, i32p, i32p, i32p, i32p, i32p, i64p, i64p, i32p],
            &[],
        )?;
        let mut call_args = vec![shape_v, base];
        call_args.extend_from_slice(ints);
        call_args.extend([lanes, mask, w_v]);
        self.b.ins().call(f, &call_args);
        Ok(())
    }

    /// The active lanes as bits of an i64 (bit `l` = lane `l`).
    pub(super) fn active_lane_bits(&mut self) -> Value {
        if self.full_state == Some(true) || self.mask.is_empty() {
            let all = if self.w >= 64 {
                -1
            } else {
                (1i64 << self.w) - 1
            };
            return self.b.ins().iconst(types::I64, all);
        }
        let m = self.mask.clone();
        let bits = self.mask_bits(&m);
        self.b.ins().uextend(types::I64, bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_builtin_names() {
        let s = builtin_shape("intel_sub_group_2d_block_read_8b_32r32x2c").expect("read");
        assert_eq!(
            (s.kind, s.esize, s.height, s.width, s.count),
            (Block2dKind::Load, 1, 32, 32, 2)
        );
        let s = builtin_shape("intel_sub_group_2d_block_read_transform_16b_32r16x2c")
            .expect("transform");
        assert_eq!(
            (s.kind, s.esize, s.height),
            (Block2dKind::LoadTransform, 2, 32)
        );
        let s = builtin_shape("intel_sub_group_2d_block_read_transpose_32b_16r8x1c")
            .expect("transpose");
        assert_eq!(
            (s.kind, s.width, s.height),
            (Block2dKind::LoadTranspose, 8, 16)
        );
        let s = builtin_shape("intel_sub_group_2d_block_write_8b_8r16x1c").expect("write");
        assert_eq!((s.kind, s.esize, s.width), (Block2dKind::Store, 1, 16));
        let s = builtin_shape("intel_sub_group_2d_block_prefetch_8b_32r16x2c").expect("pf");
        assert_eq!((s.kind, s.count), (Block2dKind::Prefetch, 2));
        // Not in the extension's tables.
        assert!(builtin_shape("intel_sub_group_2d_block_read_16b_1r32x1c").is_none());
        assert!(builtin_shape("intel_sub_group_2d_block_write_8b_16r16x1c").is_none());
        assert!(builtin_shape("intel_sub_group_2d_block_read_8b_032r32x1c").is_none());
        assert!(builtin_shape("intel_sub_group_2d_block_read_64b_8r8x1c").is_none());
        assert!(builtin_shape("intel_sub_group_block_read").is_none());
    }

    #[test]
    fn packs_shapes() {
        let s =
            builtin_shape("intel_sub_group_2d_block_read_transform_8b_32r16x4c").expect("shape");
        assert_eq!(Block2dShape::unpack(s.pack()), Some(s));
    }
}
