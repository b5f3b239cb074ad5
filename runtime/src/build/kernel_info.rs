//! What OpenCL C source declares about its kernels that SPIR-V does not keep: the
//! argument information of `clGetKernelArgInfo` (type names as written, typedefs,
//! `uint` for `unsigned int`, `const` / `restrict` / `volatile` / `pipe`, access
//! qualifiers, names) and the `CL_KERNEL_ATTRIBUTES` text (SPIR-V's `VecTypeHint`
//! has no signedness: `int4` and `uint4` look the same).
//!
//! clang's SPIR-V backend does not emit the `kernel_arg_type` strings the old
//! translator did; its LLVM IR carries all of it as metadata of each `spir_kernel`
//! (`!kernel_arg_*`, `!vec_type_hint`, `!reqd_work_group_size`, ...). For builds that
//! need it (`-cl-kernel-arg-info`, or a source that uses `vec_type_hint`) the frontend
//! runs clang once more with `-emit-llvm` and [`parse_llvm_ir`] reads the metadata.

use std::collections::HashMap;

use opencl_sys::*;

/// One kernel argument, as `clGetKernelArgInfo` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgInfo {
    /// `CL_KERNEL_ARG_ADDRESS_QUALIFIER`.
    pub address_qualifier: cl_kernel_arg_address_qualifier,
    /// `CL_KERNEL_ARG_ACCESS_QUALIFIER`.
    pub access_qualifier: cl_kernel_arg_access_qualifier,
    /// `CL_KERNEL_ARG_TYPE_NAME`.
    pub type_name: String,
    /// `CL_KERNEL_ARG_TYPE_QUALIFIER`: a `cl_bitfield` in the C headers (opencl-sys
    /// declares `cl_kernel_arg_type_qualifier` as 32 bits).
    pub type_qualifier: cl_bitfield,
    /// `CL_KERNEL_ARG_NAME`.
    pub name: String,
}

/// What the source says about one kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceKernelInfo {
    /// The arguments (None if clang gave no consistent `!kernel_arg_*` metadata).
    pub args: Option<Vec<ArgInfo>>,
    /// `CL_KERNEL_ATTRIBUTES`: the attributes in the form OpenCL C writes them.
    pub attributes: String,
}

/// Every kernel of a program, by name.
pub type SourceInfoTable = HashMap<String, SourceKernelInfo>;

/// Reads the metadata of every `spir_kernel` in textual LLVM IR.
pub fn parse_llvm_ir(ir: &str) -> SourceInfoTable {
    let (nodes, raw) = metadata_nodes(ir);
    let mut out = SourceInfoTable::new();
    for line in ir.lines() {
        let Some(rest) = line.strip_prefix("define ") else {
            continue;
        };
        if !rest.contains("spir_kernel ") {
            continue;
        }
        let Some(name) = function_name(rest) else {
            continue;
        };
        let attachment_id = |key: &str| -> Option<String> {
            let at = rest.find(&format!("!{key} !"))? + key.len() + 3;
            Some(
                rest[at..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect(),
            )
        };
        let attachment = |key: &str| nodes.get(&attachment_id(key)?);
        let hint = attachment_id("vec_type_hint").and_then(|id| raw.get(&id));
        let info = SourceKernelInfo {
            args: kernel_args(&attachment),
            attributes: attributes(&attachment, hint),
        };
        out.insert(name, info);
    }
    out
}

/// The `CL_KERNEL_ATTRIBUTES` text from a kernel's metadata attachments.
fn attributes<'a>(
    attachment: &impl Fn(&str) -> Option<&'a Vec<Entry>>,
    vec_type_hint: Option<&String>,
) -> String {
    let mut parts = Vec::new();
    let ints = |e: &Vec<Entry>| -> Option<Vec<i64>> {
        e.iter()
            .map(|x| match x {
                Entry::Int(v) => Some(*v),
                _ => None,
            })
            .collect()
    };
    for key in ["reqd_work_group_size", "work_group_size_hint"] {
        if let Some([x, y, z]) = attachment(key).and_then(ints).as_deref() {
            parts.push(format!("{key}({x},{y},{z})"));
        }
    }
    if let Some(t) = vec_type_hint.and_then(|raw| vec_type_name(raw)) {
        parts.push(format!("vec_type_hint({t})"));
    }
    if let Some([n]) = attachment("intel_reqd_sub_group_size")
        .and_then(ints)
        .as_deref()
    {
        parts.push(format!("intel_reqd_sub_group_size({n})"));
    }
    parts.join(" ")
}

/// The OpenCL C type of a `!vec_type_hint` node, `{<4 x i32> undef, i32 1}` (the
/// second operand: 1 if the type is signed).
fn vec_type_name(raw: &str) -> Option<String> {
    let (ty, signed) = raw.rsplit_once(',')?;
    let signed = signed.trim().strip_prefix("i32")?.trim() == "1";
    let ty = ty.trim();
    let (count, scalar) = match ty.strip_prefix('<') {
        Some(v) => {
            let (n, rest) = v.split_once(" x ")?;
            let scalar = rest.split('>').next()?;
            (n.trim().to_string(), scalar.trim())
        }
        None => (String::new(), ty.split_whitespace().next()?),
    };
    let base = match (scalar, signed) {
        ("i8", true) => "char",
        ("i8", false) => "uchar",
        ("i16", true) => "short",
        ("i16", false) => "ushort",
        ("i32", true) => "int",
        ("i32", false) => "uint",
        ("i64", true) => "long",
        ("i64", false) => "ulong",
        ("half", _) => "half",
        ("float", _) => "float",
        ("double", _) => "double",
        _ => return None,
    };
    Some(format!("{base}{count}"))
}

/// The arguments from the `!kernel_arg_*` attachments, if present and consistent.
fn kernel_args<'a>(attachment: &impl Fn(&str) -> Option<&'a Vec<Entry>>) -> Option<Vec<ArgInfo>> {
    let spaces = attachment("kernel_arg_addr_space")?;
    let access = attachment("kernel_arg_access_qual")?;
    let types = attachment("kernel_arg_type")?;
    let quals = attachment("kernel_arg_type_qual")?;
    let names = attachment("kernel_arg_name")?;
    let n = spaces.len();
    if [access.len(), types.len(), quals.len(), names.len()]
        .iter()
        .any(|l| *l != n)
    {
        return None;
    }
    let mut args = Vec::with_capacity(n);
    for i in 0..n {
        let (Entry::Int(space), Entry::Str(acc), Entry::Str(ty), Entry::Str(q), Entry::Str(nm)) =
            (&spaces[i], &access[i], &types[i], &quals[i], &names[i])
        else {
            return None;
        };
        let pipe = q.split_whitespace().any(|w| w == "pipe");
        let mut type_qualifier: cl_bitfield = 0;
        for w in q.split_whitespace() {
            type_qualifier |= cl_bitfield::from(match w {
                "const" => CL_KERNEL_ARG_TYPE_CONST,
                "restrict" => CL_KERNEL_ARG_TYPE_RESTRICT,
                "volatile" => CL_KERNEL_ARG_TYPE_VOLATILE,
                "pipe" => CL_KERNEL_ARG_TYPE_PIPE,
                _ => 0,
            });
        }
        let address_qualifier = match space {
            // Pipes live in global memory whatever clang's address space says.
            _ if pipe => CL_KERNEL_ARG_ADDRESS_GLOBAL,
            1 => CL_KERNEL_ARG_ADDRESS_GLOBAL,
            2 => CL_KERNEL_ARG_ADDRESS_CONSTANT,
            3 => CL_KERNEL_ARG_ADDRESS_LOCAL,
            _ => CL_KERNEL_ARG_ADDRESS_PRIVATE,
        };
        if address_qualifier == CL_KERNEL_ARG_ADDRESS_CONSTANT {
            type_qualifier |= cl_bitfield::from(CL_KERNEL_ARG_TYPE_CONST);
        }
        let access_qualifier = match acc.as_str() {
            "read_only" => CL_KERNEL_ARG_ACCESS_READ_ONLY,
            "write_only" => CL_KERNEL_ARG_ACCESS_WRITE_ONLY,
            "read_write" => CL_KERNEL_ARG_ACCESS_READ_WRITE,
            _ => CL_KERNEL_ARG_ACCESS_NONE,
        };
        args.push(ArgInfo {
            address_qualifier,
            access_qualifier,
            type_name: ty.clone(),
            type_qualifier,
            name: nm.clone(),
        });
    }
    Some(args)
}

/// One operand of a metadata node.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Entry {
    Int(i64),
    Str(String),
    Other,
}

/// The function name after `define ...`: `@name(` or `@"quoted name"(`.
fn function_name(rest: &str) -> Option<String> {
    let at = rest.find('@')? + 1;
    let tail = &rest[at..];
    if let Some(q) = tail.strip_prefix('"') {
        let end = q.find('"')?;
        return Some(unescape(&q[..end]));
    }
    let end = tail.find('(')?;
    Some(tail[..end].to_string())
}

/// Metadata nodes `!N = !{...}` (also `distinct`) by number: parsed, and raw.
#[allow(clippy::type_complexity)]
fn metadata_nodes(ir: &str) -> (HashMap<String, Vec<Entry>>, HashMap<String, String>) {
    let mut out = HashMap::new();
    let mut raw = HashMap::new();
    for line in ir.lines() {
        let Some(rest) = line.strip_prefix('!') else {
            continue;
        };
        let id: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if id.is_empty() {
            continue;
        }
        let body = rest[id.len()..].trim_start();
        let Some(body) = body.strip_prefix('=') else {
            continue;
        };
        let body = body.trim_start();
        let body = body.strip_prefix("distinct ").unwrap_or(body);
        let Some(inner) = body.strip_prefix("!{").and_then(|b| b.strip_suffix('}')) else {
            continue;
        };
        out.insert(id.clone(), entries(inner));
        raw.insert(id, inner.to_string());
    }
    (out, raw)
}

/// The comma-separated operands of a metadata node (strings may hold commas).
fn entries(inner: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut chars = inner.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&c) = chars.peek() else {
            break;
        };
        if c == '!' {
            chars.next();
            if chars.peek() == Some(&'"') {
                chars.next();
                let mut s = String::new();
                for c in chars.by_ref() {
                    if c == '"' {
                        break;
                    }
                    s.push(c);
                }
                out.push(Entry::Str(unescape(&s)));
            } else {
                let _: String = chars.by_ref().take_while(|c| *c != ',').collect();
                out.push(Entry::Other);
                continue;
            }
        } else {
            let item: String = chars.by_ref().take_while(|c| *c != ',').collect();
            let mut words = item.split_whitespace();
            out.push(match (words.next(), words.next()) {
                (Some(t), Some(v)) if t.starts_with('i') => {
                    v.parse().map_or(Entry::Other, Entry::Int)
                }
                _ => Entry::Other,
            });
            continue;
        }
        // Skip to after the next comma.
        for c in chars.by_ref() {
            if c == ',' {
                break;
            }
        }
    }
    out
}

/// LLVM's `\XX` escapes in names and strings.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = r#"
define spir_kernel void @k(i32 noundef %n, ptr addrspace(1) noalias %cv, ptr addrspace(2) %c, target("spirv.Pipe", 0) %p, target("spirv.Image", void, 1, 0, 0, 0, 0, 0, 2) %rw) #0 !kernel_arg_addr_space !7 !kernel_arg_access_qual !8 !kernel_arg_type !9 !kernel_arg_base_type !9 !kernel_arg_type_qual !11 !kernel_arg_name !12 {
define spir_func void @__clang_ocl_kern_imp_k(i32 noundef %n) #1 !kernel_arg_addr_space !7 {
define spir_kernel void @"odd name"(i32 %a) !kernel_arg_addr_space !18 !kernel_arg_access_qual !19 !kernel_arg_type !20 !kernel_arg_base_type !20 !kernel_arg_type_qual !21 !kernel_arg_name !22 !vec_type_hint !23 !work_group_size_hint !24 !reqd_work_group_size !25 !intel_reqd_sub_group_size !26 {
define spir_kernel void @h() !vec_type_hint !27 {
!7 = !{i32 0, i32 1, i32 2, i32 1, i32 1}
!8 = !{!"none", !"none", !"none", !"read_only", !"read_write"}
!9 = !{!"uint", !"int*", !"float*", !"int", !"image2d_t"}
!11 = !{!"", !"restrict const volatile", !"const", !"pipe", !""}
!12 = !{!"n", !"cv", !"c", !"p", !"rw"}
!18 = !{i32 0}
!19 = !{!"none"}
!20 = !{!"struct (unnamed at <stdin>:1:2, x)*"}
!21 = !{!""}
!22 = !{!"a"}
!23 = !{<4 x i32> undef, i32 0}
!24 = !{i32 8, i32 2, i32 1}
!25 = !{i32 16, i32 1, i32 1}
!26 = !{i32 8}
!27 = !{<3 x i64> poison, i32 1}
"#;

    #[test]
    fn reads_every_kernels_metadata() {
        let t = parse_llvm_ir(IR);
        assert_eq!(t.len(), 3, "{t:?}");
        let k = t["k"].args.as_ref().expect("k has argument metadata");
        assert_eq!(t["k"].attributes, "");
        assert_eq!(k.len(), 5);
        assert_eq!(k[0].type_name, "uint");
        assert_eq!(k[0].address_qualifier, CL_KERNEL_ARG_ADDRESS_PRIVATE);
        assert_eq!(k[0].type_qualifier, 0);
        assert_eq!(k[1].name, "cv");
        let q = |b: cl_kernel_arg_type_qualifier| cl_bitfield::from(b);
        assert_eq!(
            k[1].type_qualifier,
            q(
                CL_KERNEL_ARG_TYPE_CONST
                    | CL_KERNEL_ARG_TYPE_RESTRICT
                    | CL_KERNEL_ARG_TYPE_VOLATILE
            )
        );
        assert_eq!(k[2].address_qualifier, CL_KERNEL_ARG_ADDRESS_CONSTANT);
        assert_eq!(k[2].type_qualifier, q(CL_KERNEL_ARG_TYPE_CONST));
        assert_eq!(k[3].type_qualifier, q(CL_KERNEL_ARG_TYPE_PIPE));
        assert_eq!(k[3].address_qualifier, CL_KERNEL_ARG_ADDRESS_GLOBAL);
        assert_eq!(k[3].access_qualifier, CL_KERNEL_ARG_ACCESS_READ_ONLY);
        assert_eq!(k[4].access_qualifier, CL_KERNEL_ARG_ACCESS_READ_WRITE);
        let odd = &t["odd name"];
        let args = odd.args.as_ref().expect("odd name has argument metadata");
        assert_eq!(args[0].type_name, "struct (unnamed at <stdin>:1:2, x)*");
        assert_eq!(
            odd.attributes,
            "reqd_work_group_size(16,1,1) work_group_size_hint(8,2,1) vec_type_hint(uint4) intel_reqd_sub_group_size(8)"
        );
        assert_eq!(t["h"].attributes, "vec_type_hint(long3)");
        assert!(t["h"].args.is_none());
    }

    #[test]
    fn inconsistent_metadata_gives_no_arguments() {
        let ir = "define spir_kernel void @k(i32 %a) !kernel_arg_addr_space !1 !kernel_arg_access_qual !2 !kernel_arg_type !2 !kernel_arg_type_qual !2 !kernel_arg_name !3 {\n!1 = !{i32 0, i32 1}\n!2 = !{!\"none\"}\n!3 = !{!\"a\"}\n";
        assert_eq!(parse_llvm_ir(ir)["k"].args, None);
        assert!(parse_llvm_ir("garbage\n!x = !{\n").is_empty());
    }
}
