//! Ids for what a transformation of the flat function adds: fresh result ids above
//! every id in use, and module types and constants looked up or created (the module
//! is shared by the kernels compiled after this one, so `Module::bound` moves above
//! every id handed out here).

use crate::spirv::{ConstValue, Constant, Id, Module, Storage, Type};

/// Hands out ids from `next` and finds or adds types and constants in `m`.
pub struct IdSource<'a> {
    next: Id,
    pub m: &'a mut Module,
}

impl<'a> IdSource<'a> {
    /// Ids from `next` (a flat function's `next_id`).
    pub fn new(m: &'a mut Module, next: Id) -> Self {
        IdSource { next, m }
    }

    /// The first id not handed out (the flat function's new `next_id`).
    pub fn next(&self) -> Id {
        self.next
    }

    /// A fresh id.
    pub fn fresh(&mut self) -> Id {
        let id = self.next;
        self.next += 1;
        self.m.bound = self.m.bound.max(self.next);
        id
    }

    /// The type `t` (the lowest id declaring it, or a new one).
    pub fn type_id(&mut self, t: Type) -> Id {
        let found = self
            .m
            .types
            .iter()
            .filter(|(_, x)| **x == t)
            .map(|(id, _)| *id)
            .min();
        found.unwrap_or_else(|| {
            let id = self.fresh();
            self.m.types.insert(id, t);
            id
        })
    }

    /// The integer type of `bits` bits.
    pub fn int_type(&mut self, bits: u32) -> Id {
        self.type_id(Type::Int { bits })
    }

    /// A pointer type into `storage`.
    pub fn pointer_type(&mut self, storage: Storage, pointee: Id) -> Id {
        self.type_id(Type::Pointer { storage, pointee })
    }

    /// A new module constant.
    pub fn constant(&mut self, ty: Id, value: ConstValue) -> Id {
        let id = self.fresh();
        self.m.constants.insert(id, Constant { ty, value });
        id
    }
}
