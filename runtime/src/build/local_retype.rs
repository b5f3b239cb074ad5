//! Workaround for clang-22's SPIR-V backend typing a `__local` array by its uses.
//!
//! The backend gives an uninitialised (`undef`) global the pointee type it deduces
//! from how it is used, not its declared type (fixed upstream after LLVM 22:
//! llvm/llvm-project#202047). A `__local ushort data[2048]` that is only ever passed
//! to built-ins (`vstore_half(x, lid, data)`, `async_work_group_copy(.., data, ..)`)
//! becomes a 2-byte `OpVariable`, and the kernel then writes past the local memory
//! the device gave it. Initialised globals keep their declared type, so a program
//! whose SPIR-V shows such a variable is compiled again through LLVM IR with its
//! `__local` globals given a zero initializer (their contents are undefined, so zero
//! is as good a value as any; the jit does not initialise local memory).
//!
//! This module only inspects SPIR-V words and rewrites IR text; running clang is the
//! caller's business.

/// SPIR-V opcodes this module reads.
const OP_NAME: u32 = 5;
const OP_ENTRY_POINT: u32 = 15;
const OP_TYPE_ARRAY: u32 = 28;
const OP_TYPE_STRUCT: u32 = 30;
const OP_TYPE_POINTER: u32 = 32;
const OP_VARIABLE: u32 = 59;
const OP_LOAD: u32 = 61;
const OP_STORE: u32 = 62;
const OP_DECORATE: u32 = 71;
const OP_ATOMIC_FIRST: u32 = 227;
const OP_ATOMIC_LAST: u32 = 242;
/// `Workgroup` storage class.
const WORKGROUP: u32 = 4;

/// Whether the module has a `__local` variable of a non-aggregate type that is used
/// as more than a scalar (passed on as a pointer, indexed, cast): the sign of a
/// variable the backend retyped from its uses.
pub fn has_retyped_local(words: &[u32]) -> bool {
    let Some(body) = words.get(5..) else {
        return false;
    };
    let insts = || {
        let mut at = 0usize;
        std::iter::from_fn(move || {
            let first = *body.get(at)?;
            let len = (first >> 16) as usize;
            if len == 0 || at + len > body.len() {
                return None;
            }
            let inst = (first & 0xffff, &body[at + 1..at + len]);
            at += len;
            Some(inst)
        })
    };
    let mut aggregates = std::collections::HashSet::new();
    let mut scalar_local_ptrs = std::collections::HashSet::new();
    let mut suspects = std::collections::HashSet::new();
    for (op, ops) in insts() {
        match (op, ops) {
            (OP_TYPE_ARRAY | OP_TYPE_STRUCT, [id, ..]) => {
                aggregates.insert(*id);
            }
            (OP_TYPE_POINTER, [id, WORKGROUP, pointee]) if !aggregates.contains(pointee) => {
                scalar_local_ptrs.insert(*id);
            }
            (OP_VARIABLE, [ty, id, WORKGROUP, ..]) if scalar_local_ptrs.contains(ty) => {
                suspects.insert(*id);
            }
            _ => {}
        }
    }
    if suspects.is_empty() {
        return false;
    }
    insts().any(|(op, ops)| match op {
        // Names, the interface list, loads and atomics (operands after the pointer are
        // values or literals): plain scalar uses.
        OP_NAME | OP_DECORATE | OP_ENTRY_POINT | OP_VARIABLE | OP_LOAD => false,
        OP_ATOMIC_FIRST..=OP_ATOMIC_LAST => false,
        // A store *of* the variable (its address escapes), not through it.
        OP_STORE => ops.get(1).is_some_and(|x| suspects.contains(x)),
        _ => ops.iter().any(|x| suspects.contains(x)),
    })
}

/// IR text with every uninitialised `addrspace(3)` global given a zero initializer.
pub fn zero_initialise_locals(ir: &str) -> String {
    let mut out = String::with_capacity(ir.len() + 64);
    for line in ir.split_inclusive('\n') {
        let is_local_global = line.starts_with('@')
            && line.contains(" addrspace(3) global ")
            && !line.contains(" external ");
        if is_local_global {
            let replaced = [" undef", " poison"].iter().find_map(|init| {
                let at = line.find(init)?;
                // The initializer follows the type, before `, align`.
                let rest = &line[at + init.len()..];
                (rest.starts_with(',') || rest.trim().is_empty())
                    .then(|| format!("{} zeroinitializer{rest}", &line[..at]))
            });
            if let Some(r) = replaced {
                out.push_str(&r);
                continue;
            }
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(op: u32, operands: &[u32]) -> Vec<u32> {
        let mut v = vec![((operands.len() as u32 + 1) << 16) | op];
        v.extend_from_slice(operands);
        v
    }

    /// A module header, `%1 = int`, `%2 = ptr Workgroup %1`, `%3 = array`,
    /// `%4 = ptr Workgroup %3`, a scalar local `%5` and an array local `%6`, then `body`.
    fn module(body: &[Vec<u32>]) -> Vec<u32> {
        let mut w = vec![0x0723_0203, 0x0001_0000, 0, 100, 0];
        w.extend(inst(21, &[1, 32, 0]));
        w.extend(inst(OP_TYPE_POINTER, &[2, WORKGROUP, 1]));
        w.extend(inst(OP_TYPE_ARRAY, &[3, 1, 9]));
        w.extend(inst(OP_TYPE_POINTER, &[4, WORKGROUP, 3]));
        w.extend(inst(OP_VARIABLE, &[2, 5, WORKGROUP]));
        w.extend(inst(OP_VARIABLE, &[4, 6, WORKGROUP]));
        w.extend(inst(OP_NAME, &[5, 0]));
        for b in body {
            w.extend_from_slice(b);
        }
        w
    }

    #[test]
    fn finds_scalar_locals_used_as_pointers() {
        // Loads and stores of the scalar: fine.
        assert!(!has_retyped_local(&module(&[
            inst(OP_LOAD, &[1, 10, 5]),
            inst(OP_STORE, &[5, 10]),
        ])));
        // The array local passed on: fine.
        assert!(!has_retyped_local(&module(&[inst(
            12,
            &[7, 11, 1, 176, 6]
        )])));
        // The scalar local passed to an OpExtInst (vstore_half): retyped.
        assert!(has_retyped_local(&module(&[inst(12, &[7, 11, 1, 176, 5])])));
        // Stored as a value (its address escapes): retyped.
        assert!(has_retyped_local(&module(&[inst(OP_STORE, &[12, 5])])));
        assert!(!has_retyped_local(&[1, 2]));
    }

    #[test]
    fn zero_initialises_local_globals_only() {
        let ir = "@k.data = internal addrspace(3) global [2048 x i16] undef, align 2\n\
                  @k.t = internal addrspace(3) global %struct.S poison, align 4\n\
                  @g = addrspace(1) global i32 undef, align 4\n\
                  @e = external addrspace(3) global i32, align 4\n\
                  define void @k() {\n  ret void\n}\n";
        let out = zero_initialise_locals(ir);
        assert!(out.contains(
            "@k.data = internal addrspace(3) global [2048 x i16] zeroinitializer, align 2\n"
        ));
        assert!(out
            .contains("@k.t = internal addrspace(3) global %struct.S zeroinitializer, align 4\n"));
        assert!(out.contains("@g = addrspace(1) global i32 undef, align 4\n"));
        assert!(out.contains("@e = external addrspace(3) global i32, align 4\n"));
        assert!(out.ends_with("ret void\n}\n"));
    }
}
