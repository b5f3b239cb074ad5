//! Device-side enqueue through LLVM IR: the workaround for clang-22's SPIR-V backend,
//! which crashes on every `enqueue_kernel` (its `OpEnqueueKernel` lowering takes the
//! address of the block's invoke kernel) and on `ndrange_2D`/`ndrange_3D`.
//!
//! A program whose source uses `enqueue_kernel` or the `get_kernel_*` block queries is
//! compiled to LLVM IR, rewritten here and compiled from IR to SPIR-V:
//! - the calls of clang's `__enqueue_kernel_*` and `__get_kernel_*_impl` become calls
//!   of the imports `__cranecl_enqueue_kernel_*` / `__cranecl_get_kernel_*_impl`
//!   whose invoke-kernel operand is the kernel's *name* (a `__constant` string the
//!   rewrite adds): the runtime finds the child kernel by name in the program, and the
//!   invoke kernel stays an ordinary entry point;
//! - every other function address (the invoke pointer stored in a block literal) becomes
//!   null: OpenCL C calls blocks statically, so nothing reads it;
//! - `get_default_queue` and the device event built-ins become imports named
//!   `__cranecl_*` (the jit lowers all of them in `lower::device_enqueue`).
//!
//! `ndrange_1D/2D/3D` are defined in `cranecl.h`, so no `OpBuildNDRange` is emitted.
//!
//! This module only rewrites IR text; running clang is the caller's business.

use std::collections::BTreeSet;

/// Whether `source` may call the built-ins clang-22 cannot compile to SPIR-V directly.
pub fn uses_device_enqueue(source: &str) -> bool {
    [
        "enqueue_kernel",
        "get_kernel_work_group_size",
        "get_kernel_preferred_work_group_size_multiple",
        "get_kernel_max_sub_group_size_for_ndrange",
        "get_kernel_sub_group_count_for_ndrange",
    ]
    .iter()
    .any(|name| source.contains(name))
}

/// Whether a SPIR-V module has a pointer to a function type: clang-22 emits one for a
/// program-scope block literal (its invoke pointer), which no consumer accepts; such
/// programs are compiled again through [`rewrite_ir`], which nulls the pointer.
pub fn has_function_pointer(words: &[u32]) -> bool {
    const OP_TYPE_POINTER: u32 = 32;
    const OP_TYPE_FUNCTION: u32 = 33;
    let mut functions = BTreeSet::new();
    let mut at = 5;
    while let Some(&first) = words.get(at) {
        let len = (first >> 16) as usize;
        let Some(ops) = words.get(at + 1..at + len.max(1)) else {
            return false;
        };
        if len == 0 {
            return false;
        }
        match (first & 0xffff, ops) {
            (OP_TYPE_FUNCTION, [id, ..]) => {
                functions.insert(*id);
            }
            (OP_TYPE_POINTER, [_, _, pointee]) if functions.contains(pointee) => return true,
            _ => {}
        }
        at += len;
    }
    false
}

/// clang's mangled device-side built-ins and the imports they become.
const RENAMED: &[(&str, &str)] = &[
    (
        "@_Z14enqueue_marker9ocl_queuejPU3AS4K12ocl_clkeventPU3AS4S0_(",
        "@__cranecl_enqueue_marker(",
    ),
    ("@_Z17get_default_queuev(", "@__cranecl_get_default_queue("),
    ("@_Z17create_user_eventv(", "@__cranecl_create_user_event("),
    (
        "@_Z14is_valid_event12ocl_clkevent(",
        "@__cranecl_is_valid_event(",
    ),
    (
        "@_Z12retain_event12ocl_clkevent(",
        "@__cranecl_retain_event(",
    ),
    (
        "@_Z13release_event12ocl_clkevent(",
        "@__cranecl_release_event(",
    ),
    (
        "@_Z21set_user_event_status12ocl_clkeventi(",
        "@__cranecl_set_user_event_status(",
    ),
    (
        "@_Z28capture_event_profiling_info12ocl_clkeventiPU3AS1v(",
        "@__cranecl_capture_event_profiling_info(",
    ),
];

/// The prefixes of clang's enqueue helpers (`__enqueue_kernel_basic`, ...).
const HELPERS: &[(&str, &str)] = &[
    ("@__enqueue_kernel_", "@__cranecl_enqueue_kernel_"),
    ("@__get_kernel_", "@__cranecl_get_kernel_"),
];

const FN_ADDR_START: &str = "addrspacecast (ptr @";
const FN_ADDR_END: &str = " to ptr addrspace(4))";

/// The IR of a module that uses device-side enqueue, rewritten as the module doc says.
pub fn rewrite_ir(ir: &str) -> String {
    let mut names = BTreeSet::new();
    let mut out = String::with_capacity(ir.len() + 256);
    for line in ir.split_inclusive('\n') {
        let mut line = line.to_string();
        let helper = HELPERS.iter().find(|(from, _)| line.contains(from));
        if let Some((from, to)) = helper {
            if line.trim_start().starts_with("declare ") {
                line = retype_declaration(&line);
            } else if let Some(name) = invoke_operand(&line) {
                let operand = format!("ptr addrspace(4) {FN_ADDR_START}{name}{FN_ADDR_END}");
                line = line.replacen(
                    &operand,
                    &format!("ptr addrspace(2) @{}", name_var(&name)),
                    1,
                );
                names.insert(name);
            }
            line = line.replace(from, to);
        }
        for (from, to) in RENAMED {
            if line.contains(from) {
                line = line.replace(from, to);
            }
        }
        out.push_str(&null_function_addresses(&line));
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    for name in names {
        out.push_str(&format!(
            "@{} = private unnamed_addr addrspace(2) constant [{} x i8] c\"{}\\00\", align 1\n",
            name_var(&name),
            name.len() + 1,
            name
        ));
    }
    out
}

/// The global holding the name of invoke kernel `name`.
fn name_var(name: &str) -> String {
    format!("__cranecl_kname.{name}")
}

/// The invoke kernel named by a helper call: the first function address operand.
fn invoke_operand(line: &str) -> Option<String> {
    let at = line.find(&format!("ptr addrspace(4) {FN_ADDR_START}"))?;
    let rest = &line[at + "ptr addrspace(4) ".len() + FN_ADDR_START.len()..];
    let end = rest.find(FN_ADDR_END)?;
    let name = &rest[..end];
    name.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$'))
        .then(|| name.to_string())
}

/// A helper's declaration with the invoke parameter (the second-to-last
/// `ptr addrspace(4)`: the last is the block literal) typed as a `__constant` pointer.
fn retype_declaration(line: &str) -> String {
    let Some(open) = line
        .find('@')
        .and_then(|at| line[at..].find('(').map(|p| at + p))
    else {
        return line.to_string();
    };
    let Some(close) = line.rfind(')') else {
        return line.to_string();
    };
    if close <= open {
        return line.to_string();
    }
    let mut params: Vec<String> = line[open + 1..close]
        .split(", ")
        .map(str::to_string)
        .collect();
    let generic: Vec<usize> = params
        .iter()
        .enumerate()
        .filter(|(_, p)| p.as_str() == "ptr addrspace(4)")
        .map(|(i, _)| i)
        .collect();
    if generic.len() < 2 {
        return line.to_string();
    }
    params[generic[generic.len() - 2]] = "ptr addrspace(2)".to_string();
    format!("{}{}{}", &line[..=open], params.join(", "), &line[close..])
}

/// `line` with every generic-cast function address replaced by null.
fn null_function_addresses(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(FN_ADDR_START) {
        let tail = &rest[at + FN_ADDR_START.len()..];
        match tail.find(FN_ADDR_END) {
            Some(end)
                if tail[..end]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$')) =>
            {
                out.push_str(&rest[..at]);
                out.push_str("null");
                rest = &tail[end + FN_ADDR_END.len()..];
            }
            _ => {
                out.push_str(&rest[..at + FN_ADDR_START.len()]);
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_enqueue_calls_and_declarations() {
        let ir = "define spir_kernel void @p() {\n\
            \x20 store ptr addrspace(4) addrspacecast (ptr @__p_block_invoke to ptr addrspace(4)), ptr %b, align 8\n\
            \x20 %q = call spir_func target(\"spirv.Queue\") @_Z17get_default_queuev()\n\
            \x20 %1 = call spir_func i32 @__enqueue_kernel_basic(target(\"spirv.Queue\") %q, i32 1, ptr %nd, ptr addrspace(4) addrspacecast (ptr @__p_block_invoke_kernel to ptr addrspace(4)), ptr addrspace(4) %0)\n\
            \x20 ret void\n}\n\
            declare spir_func i32 @__enqueue_kernel_basic(target(\"spirv.Queue\"), i32, ptr, ptr addrspace(4), ptr addrspace(4)) local_unnamed_addr\n\
            declare spir_func target(\"spirv.Queue\") @_Z17get_default_queuev()\n";
        let out = rewrite_ir(ir);
        assert!(out.contains("store ptr addrspace(4) null, ptr %b"));
        assert!(out.contains("@__cranecl_enqueue_kernel_basic(target(\"spirv.Queue\") %q, i32 1, ptr %nd, ptr addrspace(2) @__cranecl_kname.__p_block_invoke_kernel, ptr addrspace(4) %0)"));
        assert!(out.contains("declare spir_func i32 @__cranecl_enqueue_kernel_basic(target(\"spirv.Queue\"), i32, ptr, ptr addrspace(2), ptr addrspace(4)) local_unnamed_addr"));
        assert!(out.contains("@__cranecl_get_default_queue()"));
        assert!(out.contains(
            "@__cranecl_kname.__p_block_invoke_kernel = private unnamed_addr addrspace(2) constant [24 x i8] c\"__p_block_invoke_kernel\\00\""
        ));
        assert!(!out.contains("addrspacecast (ptr @"));
    }

    #[test]
    fn finds_function_pointer_types() {
        // %1 = OpTypeVoid, %2 = OpTypeFunction %1, %3 = OpTypePointer Generic %2.
        let mut words = vec![0x0723_0203, 0x0001_0000, 0, 10, 0];
        words.extend([(2 << 16) | 19, 1, (3 << 16) | 33, 2, 1]);
        assert!(!has_function_pointer(&words));
        words.extend([(4 << 16) | 32, 3, 8, 2]);
        assert!(has_function_pointer(&words));
        assert!(!has_function_pointer(&[1, 2]));
    }

    #[test]
    fn detects_uses() {
        assert!(uses_device_enqueue("x = enqueue_kernel(q, f, nd, ^{});"));
        assert!(uses_device_enqueue("get_kernel_work_group_size(b)"));
        assert!(!uses_device_enqueue("kernel void k() {}"));
    }
}
