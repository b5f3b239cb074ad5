//! Which allocas share a slot, on IR written the way clang's unoptimised output is.

use super::*;

/// A function: the entry block declares `allocas`, then `body` (blocks and their
/// instructions) follows.
fn function(allocas: &[&str], entry: &str, body: &str) -> String {
    let mut s = String::from("define internal spir_func void @f(i32 %n, ptr %out) {\nentry:\n");
    for a in allocas {
        s.push_str(&format!("  %{a} = alloca i32, align 4\n"));
    }
    s.push_str(entry);
    s.push_str(body);
    s.push_str("}\n");
    s
}

/// A clang-style `for (int name = 0; name < n; name++) {}` that starts in the current
/// block and leaves control in block `<name>.end`.
fn for_loop(name: &str, inner: &str) -> String {
    format!(
        "  call void @llvm.lifetime.start.p0(ptr %{name})\n  store i32 0, ptr %{name}, align 4\n  \
         br label %{name}.cond\n\
         {name}.cond:\n  %{name}.v = load i32, ptr %{name}, align 4\n  \
         %{name}.c = icmp slt i32 %{name}.v, %n\n  br i1 %{name}.c, label %{name}.body, label %{name}.cleanup\n\
         {name}.cleanup:\n  call void @llvm.lifetime.end.p0(ptr %{name})\n  br label %{name}.end\n\
         {name}.body:\n{inner}  br label %{name}.inc\n\
         {name}.inc:\n  %{name}.w = load i32, ptr %{name}, align 4\n  %{name}.i = add nsw i32 %{name}.w, 1\n  \
         store i32 %{name}.i, ptr %{name}, align 4\n  br label %{name}.cond\n\
         {name}.end:\n"
    )
}

fn allocas(ir: &str) -> Vec<&str> {
    ir.lines()
        .filter(|l| l.contains(" = alloca "))
        .map(|l| l.trim())
        .collect()
}

#[test]
fn counters_of_sequential_loops_share_one_slot() {
    let body = format!(
        "{}{}{}  ret void\n",
        for_loop("a", ""),
        for_loop("b", ""),
        for_loop("c", "")
    );
    let ir = function(&["a", "b", "c"], "", &body);
    let (out, removed) = share_scoped_slots(&ir);
    assert_eq!(removed, 2);
    assert_eq!(allocas(&out), ["%a = alloca i32, align 4"]);
    assert!(!out.contains("ptr %b") && !out.contains("ptr %c"));
    // Only the names changed: the same lines, the same blocks.
    assert_eq!(out.lines().count(), ir.lines().count() - 2);
    // (`ptr %out` is the parameter.)
    assert_eq!(
        out.matches("ptr %a").count(),
        ir.matches("ptr %").count() - 1
    );
}

#[test]
fn nested_loops_keep_their_own_slots() {
    let inner = for_loop("b", "");
    let body = format!("{}  ret void\n", for_loop("a", &inner));
    let ir = function(&["a", "b"], "", &body);
    assert_eq!(share_scoped_slots(&ir).1, 0);
    // A third loop after the nest may take either slot.
    let body = format!("{}{}  ret void\n", for_loop("a", &inner), for_loop("c", ""));
    let ir = function(&["a", "b", "c"], "", &body);
    let (out, removed) = share_scoped_slots(&ir);
    assert_eq!(removed, 1);
    assert_eq!(allocas(&out).len(), 2);
}

#[test]
fn an_escaping_address_is_not_shared() {
    let inner = "  call spir_func void @g(ptr %b)\n";
    let body = format!("{}{}  ret void\n", for_loop("a", ""), for_loop("b", inner));
    let ir = function(&["a", "b"], "", &body);
    assert_eq!(share_scoped_slots(&ir).1, 0);
    // Stored as a value, compared: the same.
    for inner in [
        "  store ptr %b, ptr %out, align 8\n",
        "  %q = icmp eq ptr %b, %out\n",
    ] {
        let body = format!("{}{}  ret void\n", for_loop("a", ""), for_loop("b", inner));
        assert_eq!(
            share_scoped_slots(&function(&["a", "b"], "", &body)).1,
            0,
            "{inner}"
        );
    }
}

#[test]
fn a_branch_into_the_middle_of_a_scope_stops_sharing() {
    // The entry block may jump straight to b's loop header, past b's lifetime.start:
    // there b would see a's value.
    let entry = "  %skip = icmp eq i32 %n, 7\n  br i1 %skip, label %b.cond, label %go\ngo:\n";
    let body = format!("{}{}  ret void\n", for_loop("a", ""), for_loop("b", ""));
    let ir = function(&["a", "b"], entry, &body);
    assert_eq!(share_scoped_slots(&ir).1, 0);
    // A jump to the block that starts the scope is fine.
    let entry = "  %skip = icmp eq i32 %n, 7\n  br i1 %skip, label %a.end, label %go\ngo:\n";
    let ir = function(&["a", "b"], entry, &body);
    assert_eq!(share_scoped_slots(&ir).1, 1);
}

#[test]
fn a_scope_may_start_where_another_ends_unless_that_block_loops_back_into_it() {
    // a lives in pre..t; b starts in t after a's last access. When t branches back to
    // h, a's load there would follow b's store: no sharing. Back to pre (a's
    // lifetime.start) is fine.
    let ir = |back: &str| {
        function(
            &["a", "b"],
            "  br label %pre\n",
            &format!(
                "pre:\n  call void @llvm.lifetime.start.p0(ptr %a)\n  store i32 1, ptr %a, align 4\n  \
                 br label %h\nh:\n  %x = load i32, ptr %a, align 4\n  br label %t\n\
                 t:\n  %y = load i32, ptr %a, align 4\n  call void @llvm.lifetime.end.p0(ptr %a)\n  \
                 call void @llvm.lifetime.start.p0(ptr %b)\n  store i32 2, ptr %b, align 4\n  \
                 %c = icmp eq i32 %y, %n\n  br i1 %c, label %{back}, label %exit\n\
                 exit:\n  %z = load i32, ptr %b, align 4\n  ret void\n"
            ),
        )
    };
    assert_eq!(share_scoped_slots(&ir("h")).1, 0);
    assert_eq!(share_scoped_slots(&ir("pre")).1, 1);
    // b's lifetime.start before a's last access in t: no sharing either.
    let early = ir("pre").replace(
        "  %y = load i32, ptr %a, align 4\n  call void @llvm.lifetime.end.p0(ptr %a)\n  \
         call void @llvm.lifetime.start.p0(ptr %b)\n",
        "  call void @llvm.lifetime.start.p0(ptr %b)\n  %y = load i32, ptr %a, align 4\n  \
         call void @llvm.lifetime.end.p0(ptr %a)\n",
    );
    assert_ne!(early, ir("pre"));
    assert_eq!(share_scoped_slots(&early).1, 0);
}

#[test]
fn an_access_before_the_scope_starts_stops_sharing() {
    let early = "  store i32 5, ptr %b, align 4\n";
    let body = format!(
        "{}{early}{}  ret void\n",
        for_loop("a", ""),
        for_loop("b", "")
    );
    let ir = function(&["a", "b"], "", &body);
    assert_eq!(share_scoped_slots(&ir).1, 0);
    // No lifetime.start at all: not a candidate.
    let body = format!(
        "{}  store i32 1, ptr %b, align 4\n  ret void\n",
        for_loop("a", "")
    );
    assert_eq!(share_scoped_slots(&function(&["a", "b"], "", &body)).1, 0);
}

#[test]
fn volatile_and_other_types_are_not_shared() {
    let inner = "  %vv = load volatile i32, ptr %b, align 4\n";
    let body = format!("{}{}  ret void\n", for_loop("a", ""), for_loop("b", inner));
    assert_eq!(share_scoped_slots(&function(&["a", "b"], "", &body)).1, 0);
    let body = format!("{}{}  ret void\n", for_loop("a", ""), for_loop("b", ""));
    let ir = function(&["a", "b"], "", &body)
        .replace("%b = alloca i32, align 4", "%b = alloca i64, align 8");
    assert_eq!(share_scoped_slots(&ir).1, 0);
}

/// Arrays indexed through getelementptr keep their own slots (SROA does not promote
/// them; one slot for all would make InstCombine quadratic).
#[test]
fn private_arrays_are_not_shared() {
    let mut ir = String::from("define spir_func void @f(i32 %n) {\nentry:\n");
    for p in ["p", "q"] {
        ir.push_str(&format!("  %{p} = alloca [4 x float], align 4\n"));
    }
    for p in ["p", "q"] {
        ir.push_str(&format!(
            "  call void @llvm.lifetime.start.p0(ptr %{p})\n  \
             %{p}.i = getelementptr inbounds [4 x float], ptr %{p}, i64 0, i32 %n\n  \
             store float 1.0, ptr %{p}.i, align 4\n  br label %{p}.next\n{p}.next:\n  \
             %{p}.v = load float, ptr %{p}, align 4\n  \
             call void @llvm.lifetime.end.p0(ptr %{p})\n"
        ));
    }
    ir.push_str("  ret void\n}\n");
    assert_eq!(share_scoped_slots(&ir).1, 0);
    // Without the getelementptr they would.
    let direct = ir.replace(
        "  %p.i = getelementptr inbounds [4 x float], ptr %p, i64 0, i32 %n\n",
        "",
    );
    let direct = direct.replace(
        "  %q.i = getelementptr inbounds [4 x float], ptr %q, i64 0, i32 %n\n",
        "",
    );
    let direct = direct
        .replace("ptr %p.i,", "ptr %p,")
        .replace("ptr %q.i,", "ptr %q,");
    assert_eq!(share_scoped_slots(&direct).1, 1, "{direct}");
}

#[test]
fn a_module_without_candidates_is_borrowed() {
    let ir = "define void @f() {\nentry:\n  ret void\n}\n";
    assert!(matches!(share_scoped_slots(ir), (Cow::Borrowed(_), 0)));
}

#[test]
fn range_table_min_and_max() {
    let values = vec![5, 3, 8, 1, 9, 2, 7];
    let min = RangeTable::new(values.clone(), usize::min);
    let max = RangeTable::new(values.clone(), usize::max);
    for from in 0..values.len() {
        for to in from..values.len() {
            assert_eq!(min.get(from, to), *values[from..=to].iter().min().unwrap());
            assert_eq!(max.get(from, to), *values[from..=to].iter().max().unwrap());
        }
    }
}
