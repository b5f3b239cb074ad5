//! Atomic instructions (OpAtomic*, and the OpenCL 1.x / C11 built-ins `calls` maps
//! onto them): one operation per active lane, in lane order.
//!
//! On global (and generic) memory each is a locked x86-64 instruction, so every
//! memory order and scope holds against other work-groups, other kernels and the
//! host. `__local` memory belongs to one work-group, and one call of the generated
//! code runs a whole work-group on one thread: nothing else can touch it meanwhile,
//! so atomics on a `__local` pointer are plain read-modify-write sequences (a locked
//! instruction costs 20-30 ns; contended local counters are a common pattern).

use cranelift_codegen::ir::{self, condcodes::FloatCC, condcodes::IntCC, AtomicRmwOp, InstBuilder};
use cranelift_codegen::ir::{types, Value};

use super::value::{little, Elem, Lv, Val};
use super::Tr;
use crate::spirv::{AtomicOp, Id, Storage};
use crate::CompileError;

/// Where an atomic's memory is, for how it must be updated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicMemory {
    /// Memory other threads may update at the same time: locked instructions.
    Shared,
    /// The work-group's `__local` memory: only this thread touches it.
    WorkGroupLocal,
}

impl AtomicMemory {
    /// What a pointer of storage class `s` may reach (generic pointers may reach
    /// global memory).
    pub fn of(s: Storage) -> Self {
        if s == Storage::Workgroup {
            AtomicMemory::WorkGroupLocal
        } else {
            AtomicMemory::Shared
        }
    }
}

impl Tr<'_, '_> {
    /// Atomic operations: one per active lane, in lane order.
    pub fn atomic(
        &mut self,
        op: AtomicOp,
        ptr: Id,
        args: &[Id],
        rty: Option<Id>,
    ) -> Result<Option<Val>, CompileError> {
        let p = self.get(ptr)?.leaves[0].clone();
        let pty = self.type_of(ptr)?;
        let (storage, pointee) = self.m.pointee(pty)?;
        let e = if matches!(op, AtomicOp::FlagTestAndSet | AtomicOp::FlagClear) {
            // A flag is a 32-bit integer whatever the pointer's type says (clang
            // passes an i8 pointer for some of them).
            Elem::I32
        } else {
            *self
                .elems(pointee)?
                .first()
                .ok_or_else(|| CompileError::malformed("atomic on an empty type"))?
        };
        let vals: Vec<Val> = args
            .iter()
            .map(|a| self.get(*a))
            .collect::<Result<_, _>>()?;
        self.atomic_lanes(op, &p, e, &vals, rty, AtomicMemory::of(storage))
    }

    /// Atomic `op` on element `e` at pointer leaf `p` with operand values `vals`.
    pub fn atomic_lanes(
        &mut self,
        op: AtomicOp,
        p: &Lv,
        e: Elem,
        vals: &[Val],
        rty: Option<Id>,
        memory: AtomicMemory,
    ) -> Result<Option<Val>, CompileError> {
        let addrs = self.lanes_of(Elem::I64, p);
        let operands: Vec<Vec<Value>> = vals
            .iter()
            .map(|v| self.lanes_of(v.elems[0], &v.leaves[0]))
            .collect();
        let st = e.scalar();
        // Floats go through the integer of their width.
        let it = match e {
            Elem::F32 => types::I32,
            Elem::F64 => types::I64,
            _ => st,
        };
        let returns = !matches!(op, AtomicOp::Store | AtomicOp::FlagClear);
        // The element of the result: the flag test returns a bool.
        let re = if op == AtomicOp::FlagTestAndSet {
            Elem::Bool
        } else {
            e
        };
        let tys: Vec<ir::Type> = if returns { vec![re.scalar()] } else { vec![] };
        let lanes = self.guarded(&tys, |t, l| {
            let a = addrs[l];
            let arg = |k: usize| {
                operands.get(k).map(|v| v[l]).ok_or_else(|| {
                    CompileError::malformed(format!("atomic {op:?} without operand {k}"))
                })
            };
            let r = match memory {
                AtomicMemory::Shared => t.atomic_locked(op, a, &arg, st, it)?,
                AtomicMemory::WorkGroupLocal => t.atomic_plain(op, a, &arg, st, it)?,
            };
            Ok(r.into_iter().collect())
        })?;
        let Some(rty) = rty.filter(|_| returns) else {
            return Ok(None);
        };
        let res: Vec<Value> = lanes.iter().map(|l| l[0]).collect();
        let elems = self.elems(rty)?;
        let lv = self.pack_lanes(re, &res);
        Ok(Some(Val {
            leaves: vec![lv],
            elems,
        }))
    }

    /// One lane's `op` at address `a` as a locked instruction (or a compare-and-swap
    /// loop); the old value (the flag test: whether it was set), None for stores.
    fn atomic_locked(
        &mut self,
        op: AtomicOp,
        a: Value,
        arg: &dyn Fn(usize) -> Result<Value, CompileError>,
        st: ir::Type,
        it: ir::Type,
    ) -> Result<Option<Value>, CompileError> {
        let fl = ir::MemFlagsData::new().with_notrap();
        let to_int = |t: &mut Self, v: Value| {
            if it != st {
                t.b.ins().bitcast(it, little(), v)
            } else {
                v
            }
        };
        let from_int = |t: &mut Self, v: Value| {
            if it != st {
                t.b.ins().bitcast(st, little(), v)
            } else {
                v
            }
        };
        Ok(match op {
            AtomicOp::Load => {
                let v = self.b.ins().atomic_load(it, fl, a);
                Some(from_int(self, v))
            }
            AtomicOp::Store => {
                let v = to_int(self, arg(0)?);
                self.b.ins().atomic_store(fl, v, a);
                None
            }
            AtomicOp::FlagTestAndSet => {
                let one = self.b.ins().iconst(it, 1);
                let was = self.b.ins().atomic_rmw(it, fl, AtomicRmwOp::Xchg, a, one);
                Some(self.b.ins().icmp_imm_s(IntCC::NotEqual, was, 0))
            }
            AtomicOp::FlagClear => {
                let zero = self.b.ins().iconst(it, 0);
                self.b.ins().atomic_store(fl, zero, a);
                None
            }
            AtomicOp::CompareExchange => {
                let (new, cmp) = (to_int(self, arg(0)?), to_int(self, arg(1)?));
                let old = self.b.ins().atomic_cas(fl, a, cmp, new);
                Some(from_int(self, old))
            }
            AtomicOp::FAdd | AtomicOp::FMin | AtomicOp::FMax => {
                Some(self.float_atomic_loop(op, a, arg(0)?, st, it)?)
            }
            _ => {
                let (rmw, v) = self.rmw_operand(op, arg, st)?;
                let vi = to_int(self, v);
                let r = self.b.ins().atomic_rmw(it, fl, rmw, a, vi);
                Some(from_int(self, r))
            }
        })
    }

    /// One lane's `op` at address `a` of the work-group's `__local` memory, which no
    /// other thread can reach: load, compute, store.
    fn atomic_plain(
        &mut self,
        op: AtomicOp,
        a: Value,
        arg: &dyn Fn(usize) -> Result<Value, CompileError>,
        st: ir::Type,
        it: ir::Type,
    ) -> Result<Option<Value>, CompileError> {
        let fl = ir::MemFlagsData::new().with_notrap();
        Ok(match op {
            AtomicOp::Load => Some(self.b.ins().load(st, fl, a, 0)),
            AtomicOp::Store => {
                let v = arg(0)?;
                self.b.ins().store(fl, v, a, 0);
                None
            }
            AtomicOp::FlagTestAndSet => {
                let was = self.b.ins().load(it, fl, a, 0);
                let one = self.b.ins().iconst(it, 1);
                self.b.ins().store(fl, one, a, 0);
                Some(self.b.ins().icmp_imm_s(IntCC::NotEqual, was, 0))
            }
            AtomicOp::FlagClear => {
                let zero = self.b.ins().iconst(it, 0);
                self.b.ins().store(fl, zero, a, 0);
                None
            }
            AtomicOp::CompareExchange => {
                // Compared bit for bit, as the locked instruction does.
                let to_int = |t: &mut Self, v: Value| {
                    if it != st {
                        t.b.ins().bitcast(it, little(), v)
                    } else {
                        v
                    }
                };
                let (new, cmp) = (to_int(self, arg(0)?), to_int(self, arg(1)?));
                let old = self.b.ins().load(it, fl, a, 0);
                let eq = self.b.ins().icmp(IntCC::Equal, old, cmp);
                let v = self.b.ins().select(eq, new, old);
                self.b.ins().store(fl, v, a, 0);
                Some(if it != st {
                    self.b.ins().bitcast(st, little(), old)
                } else {
                    old
                })
            }
            AtomicOp::FAdd | AtomicOp::FMin | AtomicOp::FMax => {
                let old = self.b.ins().load(st, fl, a, 0);
                let new = self.float_op(op, old, arg(0)?);
                self.b.ins().store(fl, new, a, 0);
                Some(old)
            }
            _ => {
                let (rmw, v) = self.rmw_operand(op, arg, st)?;
                let old = self.b.ins().load(st, fl, a, 0);
                let new = match rmw {
                    AtomicRmwOp::Xchg => v,
                    AtomicRmwOp::Add => self.b.ins().iadd(old, v),
                    AtomicRmwOp::Sub => self.b.ins().isub(old, v),
                    AtomicRmwOp::Smin => self.b.ins().smin(old, v),
                    AtomicRmwOp::Umin => self.b.ins().umin(old, v),
                    AtomicRmwOp::Smax => self.b.ins().smax(old, v),
                    AtomicRmwOp::Umax => self.b.ins().umax(old, v),
                    AtomicRmwOp::And => self.b.ins().band(old, v),
                    AtomicRmwOp::Or => self.b.ins().bor(old, v),
                    _ => self.b.ins().bxor(old, v),
                };
                self.b.ins().store(fl, new, a, 0);
                Some(old)
            }
        })
    }

    /// The read-modify-write operation of an integer atomic (and exchange of any
    /// type) with its operand.
    fn rmw_operand(
        &mut self,
        op: AtomicOp,
        arg: &dyn Fn(usize) -> Result<Value, CompileError>,
        st: ir::Type,
    ) -> Result<(AtomicRmwOp, Value), CompileError> {
        Ok(match op {
            AtomicOp::IIncrement => (AtomicRmwOp::Add, self.b.ins().iconst(st, 1)),
            AtomicOp::IDecrement => (AtomicRmwOp::Sub, self.b.ins().iconst(st, 1)),
            other => {
                let rmw = match other {
                    AtomicOp::Exchange => AtomicRmwOp::Xchg,
                    AtomicOp::IAdd => AtomicRmwOp::Add,
                    AtomicOp::ISub => AtomicRmwOp::Sub,
                    AtomicOp::SMin => AtomicRmwOp::Smin,
                    AtomicOp::UMin => AtomicRmwOp::Umin,
                    AtomicOp::SMax => AtomicRmwOp::Smax,
                    AtomicOp::UMax => AtomicRmwOp::Umax,
                    AtomicOp::And => AtomicRmwOp::And,
                    AtomicOp::Or => AtomicRmwOp::Or,
                    AtomicOp::Xor => AtomicRmwOp::Xor,
                    _ => {
                        return Err(CompileError::codegen(format!(
                            "atomic {other:?} is not a read-modify-write"
                        )))
                    }
                };
                (rmw, arg(0)?)
            }
        })
    }

    /// The new value of a float atomic add/min/max from the old one and the operand.
    fn float_op(&mut self, op: AtomicOp, oldf: Value, v: Value) -> Value {
        match op {
            AtomicOp::FAdd => self.b.ins().fadd(oldf, v),
            _ => {
                // fmin/fmax semantics (cl_ext_float_atomics): a NaN operand loses,
                // min(x, NaN) = min(NaN, x) = x; Cranelift's fmin/fmax propagate NaN.
                let m = if op == AtomicOp::FMin {
                    self.b.ins().fmin(oldf, v)
                } else {
                    self.b.ins().fmax(oldf, v)
                };
                let v_nan = self.b.ins().fcmp(FloatCC::Unordered, v, v);
                let old_nan = self.b.ins().fcmp(FloatCC::Unordered, oldf, oldf);
                let keep = self.b.ins().select(v_nan, oldf, m);
                self.b.ins().select(old_nan, v, keep)
            }
        }
    }

    /// Float atomic add/min/max as a compare-and-swap loop; returns the old value.
    fn float_atomic_loop(
        &mut self,
        op: AtomicOp,
        a: Value,
        v: Value,
        st: ir::Type,
        it: ir::Type,
    ) -> Result<Value, CompileError> {
        let fl = ir::MemFlagsData::new().with_notrap();
        let head = self.b.create_block();
        let done = self.b.create_block();
        self.b.append_block_param(head, it);
        self.b.append_block_param(done, it);
        let init = self.b.ins().load(it, fl, a, 0);
        self.b.ins().jump(head, &[ir::BlockArg::Value(init)]);
        self.b.switch_to_block(head);
        let old = self.b.block_params(head)[0];
        let oldf = self.b.ins().bitcast(st, little(), old);
        let newf = self.float_op(op, oldf, v);
        let newi = self.b.ins().bitcast(it, little(), newf);
        let prev = self.b.ins().atomic_cas(fl, a, old, newi);
        let ok = self.b.ins().icmp(IntCC::Equal, prev, old);
        self.b.ins().brif(
            ok,
            done,
            &[ir::BlockArg::Value(prev)],
            head,
            &[ir::BlockArg::Value(prev)],
        );
        self.b.switch_to_block(done);
        let r = self.b.block_params(done)[0];
        Ok(self.b.ins().bitcast(st, little(), r))
    }
}
