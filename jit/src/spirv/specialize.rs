//! Specialization constants on the raw words: which `SpecId`s a module declares (and
//! the size `clSetProgramSpecializationConstant` must be given for each), and the
//! module with the application's values written into the `OpSpecConstant*`
//! instructions, so that decoding sees them as the constants' default values.
//! `OpSpecConstantOp` results are folded by the decoder afterwards.

use std::collections::{BTreeMap, HashMap};

use crate::CompileError;

const OP_DECORATE: u32 = 71;
const OP_TYPE_BOOL: u32 = 20;
const OP_TYPE_INT: u32 = 21;
const OP_TYPE_FLOAT: u32 = 22;
const OP_SPEC_CONSTANT_TRUE: u32 = 48;
const OP_SPEC_CONSTANT_FALSE: u32 = 49;
const OP_SPEC_CONSTANT: u32 = 50;
const OP_FUNCTION: u32 = 54;
const DECORATION_SPEC_ID: u32 = 1;

/// A specialization constant of a module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecConstant {
    /// The `SpecId` decoration's value.
    pub spec_id: u32,
    /// Bytes the application passes: 1 for booleans, the type's size otherwise.
    pub size: usize,
}

/// One `OpSpecConstant*` with a `SpecId`: where it is and what it holds.
struct Site {
    /// Word offset of the instruction.
    at: usize,
    opcode: u32,
    /// Value width in bits (1 for booleans).
    bits: u32,
}

/// The module-scope instructions before the first function: `(offset, opcode, words)`.
fn module_scope(words: &[u32]) -> Result<Vec<(usize, u32, usize)>, CompileError> {
    if words.len() < 5 {
        return Err(CompileError::malformed("not a SPIR-V module"));
    }
    let mut out = Vec::new();
    let mut i = 5;
    while i < words.len() {
        let count = (words[i] >> 16) as usize;
        let opcode = words[i] & 0xffff;
        if count == 0 || i + count > words.len() {
            return Err(CompileError::malformed(format!(
                "malformed SPIR-V module: bad word count at word {i}"
            )));
        }
        if opcode == OP_FUNCTION {
            break;
        }
        out.push((i, opcode, count));
        i += count;
    }
    Ok(out)
}

/// Every `SpecId` with its instruction.
fn sites(words: &[u32]) -> Result<BTreeMap<u32, Site>, CompileError> {
    let insts = module_scope(words)?;
    let mut spec_ids: HashMap<u32, u32> = HashMap::new();
    let mut widths: HashMap<u32, u32> = HashMap::new();
    let mut out = BTreeMap::new();
    for &(at, opcode, count) in &insts {
        let w = &words[at..at + count];
        match opcode {
            OP_DECORATE if count >= 4 && w[2] == DECORATION_SPEC_ID => {
                spec_ids.insert(w[1], w[3]);
            }
            OP_TYPE_BOOL if count >= 2 => {
                widths.insert(w[1], 1);
            }
            OP_TYPE_INT | OP_TYPE_FLOAT if count >= 3 => {
                widths.insert(w[1], w[2]);
            }
            OP_SPEC_CONSTANT_TRUE | OP_SPEC_CONSTANT_FALSE | OP_SPEC_CONSTANT if count >= 3 => {
                let Some(&spec_id) = spec_ids.get(&w[2]) else {
                    continue;
                };
                let bits = widths.get(&w[1]).copied().ok_or_else(|| {
                    CompileError::malformed(format!(
                        "specialization constant %{} has a type %{} that is not a scalar",
                        w[2], w[1]
                    ))
                })?;
                let is_bool = opcode != OP_SPEC_CONSTANT;
                if is_bool != (bits == 1) {
                    return Err(CompileError::malformed(format!(
                        "specialization constant %{}: the instruction does not match its type",
                        w[2]
                    )));
                }
                if !is_bool && count != 3 + bits.div_ceil(32) as usize {
                    return Err(CompileError::malformed(format!(
                        "OpSpecConstant %{} has {} value words for a {bits}-bit type",
                        w[2],
                        count - 3
                    )));
                }
                if out.insert(spec_id, Site { at, opcode, bits }).is_some() {
                    return Err(CompileError::malformed(format!(
                        "SpecId {spec_id} is given to more than one constant"
                    )));
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The specialization constants of `words`, by `SpecId`.
pub fn spec_constants(words: &[u32]) -> Result<Vec<SpecConstant>, CompileError> {
    Ok(sites(words)?
        .into_iter()
        .map(|(spec_id, s)| SpecConstant {
            spec_id,
            size: if s.bits == 1 {
                1
            } else {
                (s.bits / 8) as usize
            },
        })
        .collect())
}

/// `words` with `values` (little-endian bytes by `SpecId`, as the application gave
/// them) written into the specialization constants. Ids without a value keep their
/// default; an id the module does not declare or a size that does not match is an
/// error (the runtime checks both when the value is set).
pub fn specialize(
    words: &[u32],
    values: &BTreeMap<u32, Vec<u8>>,
) -> Result<Vec<u32>, CompileError> {
    let sites = sites(words)?;
    let mut out = words.to_vec();
    for (spec_id, bytes) in values {
        let s = sites.get(spec_id).ok_or_else(|| {
            CompileError::malformed(format!(
                "the module has no specialization constant {spec_id}"
            ))
        })?;
        if s.bits == 1 {
            let v = bytes.first().is_some_and(|b| *b != 0);
            let opcode = if v {
                OP_SPEC_CONSTANT_TRUE
            } else {
                OP_SPEC_CONSTANT_FALSE
            };
            out[s.at] = (out[s.at] & 0xffff_0000) | opcode;
            continue;
        }
        debug_assert_eq!(s.opcode, OP_SPEC_CONSTANT);
        let size = (s.bits / 8) as usize;
        if bytes.len() != size {
            return Err(CompileError::malformed(format!(
                "specialization constant {spec_id} takes {size} bytes, {} given",
                bytes.len()
            )));
        }
        let mut v = [0u8; 8];
        v[..size].copy_from_slice(bytes);
        let v = u64::from_le_bytes(v);
        out[s.at + 3] = v as u32;
        if s.bits > 32 {
            out[s.at + 4] = (v >> 32) as u32;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(opcode: u32, operands: &[u32]) -> Vec<u32> {
        let mut v = vec![((operands.len() as u32 + 1) << 16) | opcode];
        v.extend_from_slice(operands);
        v
    }

    fn module() -> Vec<u32> {
        let mut w = vec![0x0723_0203, 0x0001_0000, 0, 20, 0];
        w.extend(inst(OP_DECORATE, &[3, DECORATION_SPEC_ID, 7]));
        w.extend(inst(OP_DECORATE, &[5, DECORATION_SPEC_ID, 9]));
        w.extend(inst(OP_DECORATE, &[6, DECORATION_SPEC_ID, 11]));
        w.extend(inst(OP_TYPE_INT, &[1, 32, 0]));
        w.extend(inst(OP_TYPE_BOOL, &[2]));
        w.extend(inst(OP_TYPE_INT, &[4, 64, 0]));
        w.extend(inst(OP_SPEC_CONSTANT, &[1, 3, 42]));
        w.extend(inst(OP_SPEC_CONSTANT_TRUE, &[2, 5]));
        w.extend(inst(OP_SPEC_CONSTANT, &[4, 6, 1, 2]));
        w
    }

    #[test]
    fn lists_ids_and_sizes() {
        assert_eq!(
            spec_constants(&module()).unwrap(),
            vec![
                SpecConstant {
                    spec_id: 7,
                    size: 4
                },
                SpecConstant {
                    spec_id: 9,
                    size: 1
                },
                SpecConstant {
                    spec_id: 11,
                    size: 8
                },
            ]
        );
    }

    #[test]
    fn writes_values() {
        let m = module();
        let mut values = BTreeMap::new();
        values.insert(7, 0x1234_5678u32.to_le_bytes().to_vec());
        values.insert(9, vec![0]);
        values.insert(11, 0x0102_0304_0506_0708u64.to_le_bytes().to_vec());
        let s = specialize(&m, &values).unwrap();
        let find = |id: u32| {
            let mut i = 5;
            while i < s.len() {
                let n = (s[i] >> 16) as usize;
                if s[i] & 0xffff >= 48 && s[i] & 0xffff <= 50 && s[i + 2] == id {
                    return s[i..i + n].to_vec();
                }
                i += n;
            }
            panic!("no constant %{id}");
        };
        assert_eq!(find(3)[3], 0x1234_5678);
        assert_eq!(find(5)[0] & 0xffff, OP_SPEC_CONSTANT_FALSE);
        assert_eq!(&find(6)[3..], &[0x0506_0708, 0x0102_0304]);
        // Unknown id and wrong size are refused.
        let mut bad = BTreeMap::new();
        bad.insert(8, vec![1, 2, 3, 4]);
        assert!(specialize(&m, &bad).is_err());
        let mut bad = BTreeMap::new();
        bad.insert(7, vec![1, 2]);
        assert!(specialize(&m, &bad).is_err());
    }
}
