//! The id operands of an instruction, for every pass that follows values (the
//! validator's dominance checks, analysis, the linker's renumbering).

use super::{Id, Op};

/// Calls `f` on every id operand of `op` (values, pointers, labels of phis excluded).
pub fn for_each_operand(op: &Op, mut f: impl FnMut(Id)) {
    let mut op = op.clone();
    for_each_operand_mut(&mut op, |id| f(*id));
}

/// Calls `f` on every id operand of `op` (phi predecessor labels excluded), mutably.
pub fn for_each_operand_mut(op: &mut Op, mut f: impl FnMut(&mut Id)) {
    match op {
        Op::Binary(_, a, b)
        | Op::Dot(a, b)
        | Op::Wide(_, a, b)
        | Op::VectorTimesScalar(a, b)
        | Op::PtrDiff(a, b) => {
            f(a);
            f(b);
        }
        Op::Unary(_, a)
        | Op::Bitcast(a)
        | Op::ConvertPtrToU(a)
        | Op::ConvertUToPtr(a)
        | Op::PtrCast(a)
        | Op::GenericCastToPtrExplicit(a)
        | Op::GenericPtrMemSemantics(a)
        | Op::CopyObject(a)
        | Op::CopyLogical(a)
        | Op::SizeOf(a) => f(a),
        Op::Convert { value, .. } => f(value),
        Op::BitFieldInsert {
            base,
            insert,
            offset,
            count,
        } => {
            f(base);
            f(insert);
            f(offset);
            f(count);
        }
        Op::BitFieldExtract {
            base,
            offset,
            count,
            ..
        } => {
            f(base);
            f(offset);
            f(count);
        }
        Op::IntDot { a, b, acc, .. } => {
            f(a);
            f(b);
            if let Some(c) = acc {
                f(c);
            }
        }
        Op::Select { cond, a, b } => {
            f(cond);
            f(a);
            f(b);
        }
        Op::Phi(inc) => {
            for (v, _) in inc {
                f(v);
            }
        }
        Op::Load { ptr, .. } => f(ptr),
        Op::Store { ptr, value, .. } => {
            f(ptr);
            f(value);
        }
        Op::CopyMemory { dst, src, size } => {
            f(dst);
            f(src);
            if let Some(s) = size {
                f(s);
            }
        }
        Op::AccessChain {
            base,
            element,
            indices,
        } => {
            f(base);
            if let Some(e) = element {
                f(e);
            }
            for i in indices {
                f(i);
            }
        }
        Op::CompositeExtract { composite, .. } => f(composite),
        Op::CompositeInsert {
            object, composite, ..
        } => {
            f(object);
            f(composite);
        }
        Op::CompositeConstruct(v) => {
            for i in v {
                f(i);
            }
        }
        Op::VectorExtractDynamic { vector, index } => {
            f(vector);
            f(index);
        }
        Op::VectorInsertDynamic {
            vector,
            component,
            index,
        } => {
            f(vector);
            f(component);
            f(index);
        }
        Op::VectorShuffle { a, b, .. } => {
            f(a);
            f(b);
        }
        Op::Variable { init } => {
            if let Some(i) = init {
                f(i);
            }
        }
        Op::Uses(ids) => {
            for i in ids {
                f(i);
            }
        }
        Op::ExtInst { args, .. } => {
            for a in args {
                f(a);
            }
        }
        Op::Call { args, .. } => {
            for a in args {
                f(a);
            }
        }
        Op::Atomic {
            ptr, scope, args, ..
        } => {
            f(ptr);
            f(scope);
            for a in args {
                f(a);
            }
        }
        Op::ControlBarrier {
            exec_scope,
            mem_scope,
        } => {
            f(exec_scope);
            f(mem_scope);
        }
        Op::Group { scope, args, .. } => {
            if *scope != 0 {
                f(scope);
            }
            for a in args {
                f(a);
            }
        }
        Op::AsyncCopy {
            dst,
            src,
            num,
            stride,
        } => {
            f(dst);
            f(src);
            f(num);
            f(stride);
        }
        Op::Block2d {
            base,
            width,
            height,
            pitch,
            coord,
            private,
            ..
        } => {
            f(base);
            f(width);
            f(height);
            f(pitch);
            f(coord);
            if let Some(p) = private {
                f(p);
            }
        }
        Op::AsyncCopyNd { args, .. } | Op::Pipe { args, .. } | Op::DeviceEnqueue { args, .. } => {
            for a in args {
                f(a);
            }
        }
        Op::MemoryBarrier | Op::Nop | Op::Undef => {}
    }
}
