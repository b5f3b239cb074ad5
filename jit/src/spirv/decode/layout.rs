//! The logical layout of a module (SPIR-V 2.4), checked on the words before
//! `rspirv` reads them: `rspirv` files each instruction into its section by opcode,
//! so an `OpDecorate` inside a function or a constant after the functions would
//! otherwise be accepted silently. Sections must come in order, module-scope
//! instructions never appear inside a function, and function declarations (no
//! body) come before definitions. The stream's word counts were checked before.

use crate::CompileError;

const OP_FUNCTION: u32 = 54;
const OP_FUNCTION_PARAMETER: u32 = 55;
const OP_FUNCTION_END: u32 = 56;
const OP_LABEL: u32 = 248;

/// The layout section of a module-scope opcode (None: an instruction of function
/// bodies). Sections: 1 capabilities, 2 extensions, 3 ext-inst imports, 4 memory
/// model, 5 entry points, 6 execution modes, 7 strings and sources, 8 names,
/// 9 module-processed, 10 annotations, 11 types, constants and module variables.
fn section(opcode: u32) -> Option<u8> {
    Some(match opcode {
        17 => 1,
        10 => 2,
        11 => 3,
        14 => 4,
        15 => 5,
        16 | 331 => 6,
        2 | 3 | 4 | 7 => 7,
        5 | 6 => 8,
        330 => 9,
        71..=75 | 332 | 5632 | 5633 => 10,
        19..=39 | 322 | 327 | 41..=52 => 11,
        _ => return None,
    })
}

/// Instructions allowed both at module scope (section 11) and in function bodies.
fn anywhere(opcode: u32) -> bool {
    // OpNop, OpUndef, OpLine, OpExtInst, OpVariable, OpNoLine
    matches!(opcode, 0 | 1 | 8 | 12 | 59 | 317)
}

fn name(opcode: u32) -> String {
    rspirv::spirv::Op::from_u32(opcode)
        .map_or_else(|| format!("opcode {opcode}"), |o| format!("Op{o:?}"))
}

/// Checks the layout of `words` (a module whose instruction stream is well formed);
/// `function_order`: also that declarations precede definitions.
pub(super) fn check(words: &[u32], function_order: bool) -> Result<(), CompileError> {
    let bad = |at: usize, why: String| {
        Err(CompileError::malformed(format!(
            "malformed SPIR-V module: instruction at word {at}: {why}"
        )))
    };
    let mut current = 1u8;
    let mut in_function = false;
    let mut has_body = false;
    let mut seen_definition = false;
    // Parameters follow OpFunction directly.
    let mut params_open = false;
    let mut i = 5;
    while i < words.len() {
        let count = ((words[i] >> 16) as usize).max(1);
        let opcode = words[i] & 0xffff;
        if opcode == OP_FUNCTION_PARAMETER {
            if !params_open {
                return bad(i, "OpFunctionParameter not right after OpFunction".into());
            }
            i += count;
            continue;
        }
        params_open = opcode == OP_FUNCTION;
        match opcode {
            OP_FUNCTION => {
                if in_function {
                    return bad(i, "OpFunction inside a function".into());
                }
                in_function = true;
                has_body = false;
                current = 12;
            }
            OP_FUNCTION_END => {
                if !in_function {
                    return bad(i, "OpFunctionEnd outside a function".into());
                }
                if has_body {
                    seen_definition = true;
                } else if seen_definition && function_order {
                    return bad(
                        i,
                        "a function declaration (no body) after a function definition".into(),
                    );
                }
                in_function = false;
            }
            OP_LABEL if in_function => has_body = true,
            _ => match section(opcode) {
                Some(s) if in_function => {
                    if !(s == 11 && anywhere(opcode)) {
                        return bad(
                            i,
                            format!("{} cannot appear inside a function", name(opcode)),
                        );
                    }
                }
                Some(s) => {
                    if s < current {
                        return bad(i, format!("{} is out of its layout section", name(opcode)));
                    }
                    current = s;
                }
                None if in_function => {}
                None if anywhere(opcode) => {
                    if current > 11 {
                        return bad(i, format!("{} after the functions", name(opcode)));
                    }
                    current = 11;
                }
                None => return bad(i, format!("{} outside a function", name(opcode))),
            },
        }
        i += count;
    }
    if in_function {
        return Err(CompileError::malformed(
            "malformed SPIR-V module: the last function has no OpFunctionEnd",
        ));
    }
    Ok(())
}
