//! Loop-heavy programs: local variables whose scopes do not overlap share one stack
//! slot before `opt` runs, so that SROA promotes them in time linear in the function.
//!
//! Why: SROA hands the allocas it can promote to LLVM's PromoteMemToReg, which places
//! the phis of each alloca with an iterated dominance frontier, and LLVM's IDF walks
//! the whole dominator subtree of every block that defines the alloca. The counter of
//! a top-level loop is stored before the loop and in it, and the loop's header
//! dominates the rest of the function, so each of N sequential loops costs a walk of
//! the rest of the function: O(N²). On build_scale `loops` at N=4000 that was 3.15 s
//! of `opt`'s 4.2 s. One alloca for all those counters is one IDF walk of the function
//! (SROA 0.19 s), and the SSA form that comes out is the same: every load sees the
//! stores it saw before.
//!
//! When sharing is sound. clang's unoptimised IR declares every local in the entry
//! block and brackets its scope with `llvm.lifetime.start`/`end`; before `start` the
//! slot's contents are undefined. A slot qualifies when its address is only loaded
//! from, stored to (as the address) or passed to the lifetime markers (what SROA
//! promotes), and it has one `lifetime.start`,
//! in block `s`, before every access in `s`. Let `t` be the last block (in text order)
//! with an access. If no edge enters a block of `(s, t]` from outside `[s, t]`, every
//! path from outside the range to an access passes through the `lifetime.start` at the
//! top of the range, where the old contents stop mattering. Two such slots with
//! disjoint ranges and the same `alloca` type can therefore share memory: a path from
//! an access of one to an access of the other leaves one range and enters the other
//! through its `lifetime.start`. The ranges may also meet in one block `t` (a block
//! scope's `lifetime.end` followed by the next one's `lifetime.start`, as clang emits
//! `{ int a; .. } { int b; .. }`) when the first slot's accesses there come before the
//! second's `lifetime.start` and `t` does not branch back into `(s, t]`. Slots are
//! assigned like intervals to registers (interval partitioning, sorted by start).
//!
//! Arrays indexed through `getelementptr` are left alone: SROA does not promote those
//! with variable indices, and one alloca with the accesses of thousands of arrays makes
//! InstCombine quadratic instead (it walks the alloca's users per instruction; build_scale
//! `arrays` N=1000: InstCombine 0.08 -> 1.4 s when they shared).
//!
//! This module only rewrites IR text; running `opt` is the caller's business.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use super::loop_heavy::{block_label, label_name};

/// `ir` with the qualifying allocas of each function sharing slots (see the module
/// doc), and how many allocas were removed. Functions this parser does not follow (a
/// branch to an unknown label) are left alone.
pub fn share_scoped_slots(ir: &str) -> (Cow<'_, str>, usize) {
    let lines: Vec<&str> = ir.split_inclusive('\n').collect();
    let mut edits: HashMap<usize, Option<String>> = HashMap::new();
    let mut removed = 0;
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        if line.starts_with("define ") && line.trim_end().ends_with('{') {
            let end = (at + 1..lines.len())
                .find(|&i| lines[i].starts_with('}'))
                .unwrap_or(lines.len());
            removed += Function::parse(&lines, at + 1, end)
                .map_or(0, |function| function.share(&lines, &mut edits));
            at = end;
        }
        at += 1;
    }
    if edits.is_empty() {
        return (Cow::Borrowed(ir), 0);
    }
    let mut out = String::with_capacity(ir.len());
    for (i, line) in lines.iter().enumerate() {
        match edits.get(&i) {
            Some(None) => {}
            Some(Some(text)) => out.push_str(text),
            None => out.push_str(line),
        }
    }
    (Cow::Owned(out), removed)
}

/// One function's lines (indices into the module's lines), their blocks and the
/// lowest and highest predecessor of each block.
struct Function {
    /// (line index, block index) of every instruction line.
    insts: Vec<(usize, usize)>,
    /// The line of each block's label (the entry block: the first instruction line).
    first_line: Vec<usize>,
    /// Successor blocks of each block.
    succs: Vec<Vec<usize>>,
    min_pred: RangeTable,
    max_pred: RangeTable,
}

/// What a line does with a candidate slot's address.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    /// A load, or a store to it.
    Access,
    Start,
    End,
}

/// A candidate: an entry-block alloca with the lines that use it.
struct Slot<'a> {
    name: &'a str,
    /// Everything after `= ` (`alloca i32, align 4`): slots share only with equals.
    kind: &'a str,
    line: usize,
    escaped: bool,
    /// (line, block, use, byte offset of the name's `%`).
    uses: Vec<(usize, usize, Use, usize)>,
}

impl Function {
    /// Blocks and edges of the instruction lines `lines[from..to]`; None when a branch
    /// names a block the function does not have.
    fn parse(lines: &[&str], from: usize, to: usize) -> Option<Function> {
        let mut insts = Vec::new();
        let mut names: HashMap<&str, usize> = HashMap::new();
        let mut succs: Vec<Vec<&str>> = vec![Vec::new()];
        let mut first_line = vec![from];
        let mut block = 0;
        for (i, line) in lines.iter().enumerate().take(to).skip(from) {
            let line = line.trim_end();
            if line.trim_start().is_empty() || line.trim_start().starts_with(';') {
                continue;
            }
            if let Some(label) = block_label(line) {
                // The entry block's own label does not start a second block.
                if !(block == 0 && insts.is_empty()) {
                    block += 1;
                    succs.push(Vec::new());
                    first_line.push(i);
                }
                names.insert(label, block);
                continue;
            }
            insts.push((i, block));
            let mut rest = line;
            while let Some(at) = rest.find("label %") {
                rest = &rest[at + "label %".len()..];
                succs[block].push(label_name(rest));
            }
        }
        let blocks = succs.len();
        let mut min_pred = vec![usize::MAX; blocks];
        let mut max_pred = vec![0; blocks];
        let mut resolved = Vec::with_capacity(blocks);
        for (from, targets) in succs.iter().enumerate() {
            let mut out = Vec::with_capacity(targets.len());
            for target in targets {
                let to = *names.get(target)?;
                min_pred[to] = min_pred[to].min(from);
                max_pred[to] = max_pred[to].max(from);
                out.push(to);
            }
            resolved.push(out);
        }
        Some(Function {
            insts,
            first_line,
            succs: resolved,
            min_pred: RangeTable::new(min_pred, usize::min),
            max_pred: RangeTable::new(max_pred, usize::max),
        })
    }

    /// Finds the slots that can share, records the edits in `edits` and returns how
    /// many allocas go.
    fn share(&self, lines: &[&str], edits: &mut HashMap<usize, Option<String>>) -> usize {
        let mut slots: Vec<Slot> = Vec::new();
        // Names of candidates -> candidate index.
        let mut owner: HashMap<&str, usize> = HashMap::new();
        for &(i, block) in &self.insts {
            if block != 0 {
                break;
            }
            if let Some((name, kind)) = alloca(lines[i].trim_end()) {
                owner.insert(name, slots.len());
                slots.push(Slot {
                    name,
                    kind,
                    line: i,
                    escaped: false,
                    uses: Vec::new(),
                });
            }
        }
        if slots.len() < 2 {
            return 0;
        }
        let alloca_lines: HashSet<usize> = slots.iter().map(|s| s.line).collect();
        for &(i, block) in &self.insts {
            if alloca_lines.contains(&i) {
                continue;
            }
            let line = lines[i].trim_end();
            let mut found: Option<(usize, usize)> = None;
            let mut several = false;
            for (at, name) in local_names(line) {
                if let Some(&slot) = owner.get(name) {
                    if found.is_some() {
                        several = true;
                        slots[slot].escaped = true;
                    }
                    found.get_or_insert((slot, at));
                }
            }
            let Some((slot, at)) = found else {
                continue;
            };
            match (several, classify(line, at)) {
                (false, Some(what)) => slots[slot].uses.push((i, block, what, at)),
                _ => slots[slot].escaped = true,
            }
        }
        let mut by_kind: HashMap<&str, Vec<(Scope, usize)>> = HashMap::new();
        for (index, slot) in slots.iter().enumerate() {
            if let Some(scope) = self.scope(slot) {
                by_kind.entry(slot.kind).or_default().push((scope, index));
            }
        }
        let mut removed = 0;
        for (_, mut scopes) in by_kind {
            scopes.sort_unstable_by_key(|(scope, _)| scope.start);
            // Slots in use, by the line from which they are free.
            let mut busy: BinaryHeap<Reverse<(usize, usize)>> = BinaryHeap::new();
            for (scope, index) in scopes {
                let representative = match busy.peek() {
                    Some(&Reverse((free, rep))) if free <= scope.start => {
                        busy.pop();
                        rep
                    }
                    _ => index,
                };
                busy.push(Reverse((scope.free_from, representative)));
                if representative != index {
                    removed += 1;
                    rename(lines, &slots[index], slots[representative].name, edits);
                }
            }
        }
        removed
    }

    /// The scope of a slot that qualifies (see the module doc): blocks `[s, t]`.
    fn scope(&self, slot: &Slot) -> Option<Scope> {
        if slot.escaped {
            return None;
        }
        let mut starts = slot.uses.iter().filter(|u| u.2 == Use::Start);
        let &(start, s, _, _) = starts.next()?;
        if starts.next().is_some() {
            return None;
        }
        let (mut t, mut last) = (s, start);
        for &(line, block, _, _) in &slot.uses {
            if block < s || (block == s && line < start) {
                return None;
            }
            t = t.max(block);
            last = last.max(line);
        }
        let single_entry =
            s == t || (self.min_pred.get(s + 1, t) >= s && self.max_pred.get(s + 1, t) <= t);
        if !single_entry {
            return None;
        }
        // Another scope may start in block t after `last` when t does not branch back
        // into (s, t] (where this slot's accesses would follow the other's without a
        // lifetime.start between them); else from the next block on.
        let closed = self.succs[t].iter().all(|&b| b <= s || b > t);
        let free_from = if closed {
            last + 1
        } else {
            self.first_line.get(t + 1).copied().unwrap_or(usize::MAX)
        };
        Some(Scope { start, free_from })
    }
}

/// A qualifying slot's scope in line numbers: its `lifetime.start`, and the first line
/// where another slot's scope may start so that the two can share memory.
struct Scope {
    start: usize,
    free_from: usize,
}

/// Records the edits that make `slot` use `representative`'s memory: its alloca goes,
/// the lines naming it name the representative.
fn rename(
    lines: &[&str],
    slot: &Slot,
    representative: &str,
    edits: &mut HashMap<usize, Option<String>>,
) {
    edits.insert(slot.line, None);
    for &(line, _, _, at) in &slot.uses {
        let text = lines[line];
        let end = at + 1 + slot.name.len();
        edits.insert(
            line,
            Some(format!("{}%{representative}{}", &text[..at], &text[end..])),
        );
    }
}

/// `%name = alloca <kind>` with a constant size: (name, kind).
fn alloca(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix('%')?;
    let (name, kind) = rest.split_once(" = ")?;
    let plain = !name.is_empty() && name.bytes().all(is_name_byte);
    let constant = kind
        .split_once(',')
        .is_none_or(|(_, tail)| !tail.contains('%'));
    (plain && kind.starts_with("alloca ") && constant).then_some((name, kind))
}

/// What the line does with the pointer named at byte `at`; None: anything else (the
/// address escapes).
fn classify(line: &str, at: usize) -> Option<Use> {
    let before = &line[..at];
    let after = &line[at + 1 + name_len(line, at)..];
    let operand_end = after.is_empty() || after.starts_with(',');
    let text = line.trim_start();
    let rhs = text
        .strip_prefix('%')
        .and_then(|t| t.split_once(" = "))
        .map(|(_, rhs)| rhs);
    let address = before.ends_with(", ptr ") && operand_end;
    let plain = |rest: &str| !rest.starts_with("volatile ") && !rest.starts_with("atomic ");
    if let Some(rhs) = rhs {
        if let Some(rest) = rhs.strip_prefix("load ") {
            return (address && plain(rest)).then_some(Use::Access);
        }
        return None;
    }
    if let Some(rest) = text.strip_prefix("store ") {
        return (address && plain(rest)).then_some(Use::Access);
    }
    let marker = before.ends_with("(ptr ") || before.ends_with(", ptr ");
    if marker && (after.starts_with(')') || after.starts_with(", ")) {
        if text.starts_with("call void @llvm.lifetime.start.") {
            return Some(Use::Start);
        }
        if text.starts_with("call void @llvm.lifetime.end.") {
            return Some(Use::End);
        }
    }
    None
}

/// The `%name` tokens of an instruction line: (byte offset of `%`, name). Quoted
/// names are skipped (a candidate never has one).
fn local_names(line: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = line.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            if bytes[i] == b'%' {
                let at = i;
                let len = name_len(line, at);
                i += 1 + len.max(1);
                if len > 0 {
                    return Some((at, &line[at + 1..at + 1 + len]));
                }
            } else {
                i += 1;
            }
        }
        None
    })
}

/// The length of the unquoted name after the `%` at byte `at`.
fn name_len(line: &str, at: usize) -> usize {
    line.as_bytes()[at + 1..]
        .iter()
        .take_while(|&&b| is_name_byte(b))
        .count()
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"._$-".contains(&b)
}

/// Minimum or maximum of a range of values in O(1) (a sparse table).
struct RangeTable {
    levels: Vec<Vec<usize>>,
    combine: fn(usize, usize) -> usize,
}

impl RangeTable {
    fn new(values: Vec<usize>, combine: fn(usize, usize) -> usize) -> RangeTable {
        let mut levels = vec![values];
        let mut width = 1;
        while 2 * width <= levels[0].len() {
            let last = levels.last().expect("a level");
            let next = (0..last.len() - width)
                .map(|i| combine(last[i], last[i + width]))
                .collect();
            levels.push(next);
            width *= 2;
        }
        RangeTable { levels, combine }
    }

    /// The combined value of `values[from..=to]` (`from <= to`).
    fn get(&self, from: usize, to: usize) -> usize {
        let level = (usize::BITS - 1 - (to - from + 1).leading_zeros()) as usize;
        let row = &self.levels[level];
        (self.combine)(row[from], row[to + 1 - (1 << level)])
    }
}

#[cfg(test)]
mod tests;
