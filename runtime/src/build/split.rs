//! Splitting a SPIR-V module by kernel, so the kernels of one program can be
//! jit-compiled in parallel: each part is the whole module with only one
//! `OpEntryPoint` (and that entry point's execution modes) kept. Functions, types,
//! constants and decorations stay as they are, so every part is a valid module with
//! the same meaning for its kernel. Works on raw words; knows nothing of the jit.

/// `OpEntryPoint`.
const OP_ENTRY_POINT: u32 = 15;
/// `OpExecutionMode`.
const OP_EXECUTION_MODE: u32 = 16;
/// `OpExecutionModeId`.
const OP_EXECUTION_MODE_ID: u32 = 331;
/// `OpFunction`: the module-level sections end here.
const OP_FUNCTION: u32 = 54;
/// The `Kernel` execution model.
const MODEL_KERNEL: u32 = 6;

/// One kernel entry point of a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryPoint {
    /// The `OpFunction` result id.
    pub id: u32,
    pub name: String,
}

/// Walks the module-level instructions before the first function: `(offset, opcode,
/// word count)`. None when the module is malformed (then nothing is split).
fn header_instructions(words: &[u32]) -> Option<Vec<(usize, u32, usize)>> {
    let mut out = Vec::new();
    let mut i = 5;
    while i < words.len() {
        let count = (words[i] >> 16) as usize;
        let opcode = words[i] & 0xffff;
        if count == 0 || i + count > words.len() {
            return None;
        }
        if opcode == OP_FUNCTION {
            break;
        }
        out.push((i, opcode, count));
        i += count;
    }
    (words.len() >= 5).then_some(out)
}

/// The kernel entry points of `words`, in module order (empty if malformed).
pub fn entry_points(words: &[u32]) -> Vec<EntryPoint> {
    let Some(insts) = header_instructions(words) else {
        return Vec::new();
    };
    insts
        .into_iter()
        .filter(|&(i, opcode, count)| {
            opcode == OP_ENTRY_POINT && count >= 4 && words[i + 1] == MODEL_KERNEL
        })
        .map(|(i, _, count)| {
            let bytes: Vec<u8> = words[i + 3..i + count]
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect();
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            EntryPoint {
                id: words[i + 2],
                name: String::from_utf8_lossy(&bytes[..end]).into_owned(),
            }
        })
        .collect()
}

/// The size in words of each function body, by function id (a proxy for how long
/// the jit takes on a kernel: clang has inlined most callees at -O2).
pub fn function_sizes(words: &[u32]) -> std::collections::HashMap<u32, usize> {
    const OP_FUNCTION_END: u32 = 56;
    let mut sizes = std::collections::HashMap::new();
    let mut current: Option<(u32, usize)> = None;
    let mut i = 5;
    while i < words.len() {
        let count = (words[i] >> 16) as usize;
        let opcode = words[i] & 0xffff;
        if count == 0 || i + count > words.len() {
            break;
        }
        match opcode {
            OP_FUNCTION if count >= 3 => current = Some((words[i + 2], i)),
            OP_FUNCTION_END => {
                if let Some((id, start)) = current.take() {
                    sizes.insert(id, i + 1 - start);
                }
            }
            _ => {}
        }
        i += count;
    }
    sizes
}

/// `words` with every entry point but `keep` (a function id) removed, along with the
/// other entry points' execution modes.
pub fn only_entry_point(words: &[u32], keep: u32) -> Vec<u32> {
    let Some(insts) = header_instructions(words) else {
        return words.to_vec();
    };
    let mut out = Vec::with_capacity(words.len());
    out.extend_from_slice(&words[..5]);
    let mut copied_to = 5;
    for (i, opcode, count) in insts {
        let drop = match opcode {
            OP_ENTRY_POINT => count >= 3 && words[i + 2] != keep,
            OP_EXECUTION_MODE | OP_EXECUTION_MODE_ID => count >= 2 && words[i + 1] != keep,
            _ => false,
        };
        if drop {
            out.extend_from_slice(&words[copied_to..i]);
            copied_to = i + count;
        }
    }
    out.extend_from_slice(&words[copied_to..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(opcode: u32, operands: &[u32]) -> Vec<u32> {
        let mut v = vec![((operands.len() as u32 + 1) << 16) | opcode];
        v.extend_from_slice(operands);
        v
    }

    fn name_words(name: &str) -> Vec<u32> {
        let mut bytes = name.as_bytes().to_vec();
        bytes.push(0);
        while !bytes.len().is_multiple_of(4) {
            bytes.push(0);
        }
        bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    fn module() -> Vec<u32> {
        let mut m = vec![0x0723_0203, 0x0001_0000, 0, 100, 0];
        m.extend(inst(17, &[6])); // OpCapability Kernel
        let mut ep = vec![MODEL_KERNEL, 10];
        ep.extend(name_words("first"));
        ep.push(40); // an interface id
        m.extend(inst(OP_ENTRY_POINT, &ep));
        let mut ep = vec![MODEL_KERNEL, 11];
        ep.extend(name_words("second_kernel"));
        m.extend(inst(OP_ENTRY_POINT, &ep));
        m.extend(inst(OP_EXECUTION_MODE, &[10, 17, 8, 1, 1]));
        m.extend(inst(OP_EXECUTION_MODE, &[11, 35, 16]));
        m.extend(inst(5, &[10, 0x6161])); // OpName
        m.extend(inst(OP_FUNCTION, &[1, 10, 0, 2]));
        m.extend(inst(56, &[])); // OpFunctionEnd
        m
    }

    #[test]
    fn lists_kernels_in_order() {
        let eps = entry_points(&module());
        assert_eq!(
            eps,
            [
                EntryPoint {
                    id: 10,
                    name: "first".into()
                },
                EntryPoint {
                    id: 11,
                    name: "second_kernel".into()
                }
            ]
        );
        assert!(entry_points(&[1, 2]).is_empty());
    }

    #[test]
    fn measures_function_bodies() {
        let sizes = function_sizes(&module());
        // OpFunction (5 words) + OpFunctionEnd (1 word).
        assert_eq!(sizes.get(&10), Some(&6));
    }

    #[test]
    fn keeps_one_entry_point_and_its_modes() {
        let m = module();
        let first = only_entry_point(&m, 10);
        assert_eq!(
            entry_points(&first),
            [EntryPoint {
                id: 10,
                name: "first".into()
            }]
        );
        // The other kernel's execution mode is gone, ours stays, the rest is intact.
        assert!(first
            .windows(2)
            .any(|w| w[0] == (6 << 16 | OP_EXECUTION_MODE) && w[1] == 10));
        assert!(!first
            .windows(2)
            .any(|w| w[0] == (4 << 16 | OP_EXECUTION_MODE) && w[1] == 11));
        assert_eq!(&first[first.len() - 6..], &m[m.len() - 6..]);
        let second = only_entry_point(&m, 11);
        assert_eq!(entry_points(&second)[0].name, "second_kernel");
        assert!(first.len() < m.len() && second.len() < m.len());
    }
}
