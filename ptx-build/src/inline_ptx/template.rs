//! The rules on PTX template text that `asm()` and `asm!` share: splitting a template into
//! statements and labels, the special registers, which instructions write memory, and where
//! `.reg` declarations and labels sit outside `{ }` scoping.

/// Special registers whose value changes while a thread runs: reading one in an asm that the
/// compiler may delete, merge or move gives stale or wrong values.
pub(super) fn is_changing_register(name: &str) -> bool {
    matches!(name, "clock" | "clock64" | "clock_hi" | "globaltimer" | "globaltimer_lo" | "globaltimer_hi" | "smid" | "warpid")
        || name.strip_prefix("pm").is_some_and(|n| {
            let n = n.strip_suffix("_64").unwrap_or(n);
            n.len() == 1 && n.as_bytes()[0].is_ascii_digit()
        })
}

/// Every special register of the PTX ISA (for the `%%` rule), without the `.x` suffix.
pub(super) fn is_special_register(name: &str) -> bool {
    is_changing_register(name)
        || matches!(
            name,
            "tid"
                | "ntid"
                | "laneid"
                | "nwarpid"
                | "ctaid"
                | "nctaid"
                | "nsmid"
                | "gridid"
                | "is_explicit_cluster"
                | "clusterid"
                | "nclusterid"
                | "cluster_ctaid"
                | "cluster_nctaid"
                | "cluster_ctarank"
                | "cluster_nctarank"
                | "lanemask_eq"
                | "lanemask_le"
                | "lanemask_lt"
                | "lanemask_ge"
                | "lanemask_gt"
                | "total_smem_size"
                | "aggr_smem_size"
                | "dynamic_smem_size"
                | "current_graph_exec"
        )
        || name.strip_prefix("envreg").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        || name.starts_with("reserved_smem_offset")
}

/// Instructions that write memory. The async copies' bookkeeping (`cp.async.commit_group`,
/// `cp.async.wait_group`, `cp.async.mbarrier.arrive`) writes none itself: the copy wrote it, and
/// CUDA's own `cuda_pipeline_helpers.h` and `<cuda/pipeline>` issue them without "memory".
pub(super) fn writes_memory(mnemonic: &str) -> bool {
    let op = mnemonic.split('.').next().unwrap_or_default();
    let bookkeeping = ["commit_group", "wait_group", "wait_all", "mbarrier"].iter().any(|w| mnemonic.split('.').any(|p| p == *w));
    matches!(op, "st" | "atom" | "red" | "stmatrix" | "multimem")
        || (mnemonic.starts_with("cp.async") && !bookkeeping)
        || mnemonic.starts_with("cp.reduce")
}

/// One PTX statement of a template: its optional guard predicate, mnemonic and operand text.
pub(super) struct Statement<'a> {
    /// Byte offset in the template.
    pub offset: usize,
    pub predicated: bool,
    /// The guard without its `@` (`p`, `!p`); empty when unpredicated.
    pub guard: &'a str,
    pub mnemonic: &'a str,
    pub operands: &'a str,
}

/// Splits a PTX template into statements (`;`-separated, labels and braces noted).
pub(super) fn statements(template: &str) -> (Vec<Statement<'_>>, Vec<(usize, usize)>) {
    let mut out = Vec::new();
    let mut labels = Vec::new(); // (offset, depth)
    let mut depth = 0usize;
    let bytes = template.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'{' {
            depth += 1;
            i += 1;
            continue;
        }
        if c == b'}' {
            depth = depth.saturating_sub(1);
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() || c == b';' {
            i += 1;
            continue;
        }
        if template[i..].starts_with("//") {
            i = template[i..].find('\n').map_or(bytes.len(), |n| i + n);
            continue;
        }
        let end = template[i..].find([';', '{', '}']).map_or(bytes.len(), |n| i + n);
        let mut text = &template[i..end];
        let mut start = i;
        // Leading labels: `L1:`.
        loop {
            let t = text.trim_start();
            start += text.len() - t.len();
            text = t;
            let ident_len = text.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$').count();
            if ident_len > 0 && text[ident_len..].trim_start().starts_with(':') && !text[ident_len..].trim_start().starts_with("::") {
                labels.push((start, depth));
                let colon = text.find(':').unwrap_or(0) + 1;
                start += colon;
                text = &text[colon..];
            } else {
                break;
            }
        }
        let t = text.trim_start();
        start += text.len() - t.len();
        text = t.trim_end();
        if !text.is_empty() {
            let (guard, rest) = match text.strip_prefix('@') {
                Some(r) => {
                    let n = r.find(char::is_whitespace).unwrap_or(r.len());
                    (&r[..n], r[n..].trim_start())
                }
                None => ("", text),
            };
            let n = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let predicated = text.starts_with('@');
            out.push(Statement { offset: start, predicated, guard, mnemonic: &rest[..n], operands: rest[n..].trim() });
        }
        i = end;
    }
    (out, labels)
}

/// Where an instruction of `ptx` ends without its `;`: before a closing scope brace or the
/// template's end, or at a line break followed by another instruction. ptxas stops at the next
/// token with "Parsing error ... syntax error", a line later than the mistake. A brace inside an
/// instruction is a vector operand (`mov.b32 {lo, hi}, %1;`), not a scope.
pub(super) fn unterminated(ptx: &str) -> Vec<usize> {
    // Bytes throughout: a template may hold any UTF-8 (a `/* a·b */` comment), and every byte
    // the scan stops at is ASCII.
    let b = ptx.as_bytes();
    let find = |from: usize, what: u8| b[from..].iter().position(|&c| c == what).map(|n| from + n);
    let mut out = Vec::new();
    // The current instruction's end so far, and whether it is one: text that starts with an
    // operand (`"%0"` with a `"C"` constraint, a whole instruction given by the caller) is not.
    let mut current: Option<(usize, bool)> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if b[i..].starts_with(b"//") {
            i = find(i, b'\n').unwrap_or(b.len());
            continue;
        }
        if b[i..].starts_with(b"/*") {
            i = b[i + 2..].windows(2).position(|w| w == b"*/").map_or(b.len(), |n| i + 2 + n + 2);
            continue;
        }
        match c {
            b';' => current = None,
            b'{' if current.is_some() => {
                // A vector operand: to its closing brace, as part of the instruction.
                let close = find(i, b'}').map_or(b.len(), |n| n + 1);
                current = current.map(|(_, real)| (close, real));
                i = close;
                continue;
            }
            b'{' => {}
            b'}' => {
                if let Some((end, true)) = current.take() {
                    out.push(end);
                }
            }
            b'\n' => {
                // Two instructions on two lines with no `;` between them; a line that goes on
                // (after a comma or an open bracket) is one instruction.
                if let Some((end, real)) = current {
                    let last = b[..end].iter().rev().find(|c| !c.is_ascii_whitespace());
                    let goes_on = last.is_some_and(|c| b",[(|+-".contains(c));
                    let next = b[i + 1..].iter().find(|c| !c.is_ascii_whitespace());
                    let starts = next.is_some_and(|c| c.is_ascii_alphabetic() || *c == b'@' || *c == b'.');
                    if !goes_on && starts {
                        if real {
                            out.push(end);
                        }
                        current = None;
                    }
                }
            }
            c if c.is_ascii_whitespace() => {}
            _ => {
                // A label (`L1:`) ends where its colon is: it needs no `;`.
                let word = b[i..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_' || **b == b'$').count();
                let rest = &b[i + word..];
                if current.is_none() && word > 0 && rest.starts_with(b":") && !rest.starts_with(b"::") {
                    i += word + 1;
                    continue;
                }
                let real = current.map_or(c.is_ascii_alphabetic() || c == b'.' || c == b'@', |(_, r)| r);
                // The end of the character this byte starts (a multi-byte one counts whole).
                let len = ptx[i..].chars().next().map_or(1, char::len_utf8);
                current = Some((i + len, real));
                i += len;
                continue;
            }
        }
        i += 1;
    }
    if let Some((end, true)) = current {
        out.push(end);
    }
    out
}

/// The destination of an instruction: its first operand (a `{..}` vector counts as one).
pub(super) fn destination(operands: &str) -> &str {
    let mut depth = 0;
    for (i, c) in operands.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => return &operands[..i],
            _ => {}
        }
    }
    operands
}

/// Register names the template declares (`.reg .pred p;`, `.reg .u32 %r<4>;`).
pub(super) fn declared_registers(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (off, _) in t.match_indices(".reg") {
        let decl = &t[off + 4..];
        let decl = &decl[..decl.find(';').unwrap_or(decl.len())];
        for part in decl.split([',', ' ', '\t', '\n']).filter(|p| !p.is_empty() && !p.starts_with('.')) {
            let name = part.trim_start_matches('%');
            let name = name.split('<').next().unwrap_or(name);
            out.push(name.to_string());
        }
    }
    out
}

/// The first `.reg` declaration and the first label outside PTX's `{ }` scoping, as
/// (offset, what): each inlined copy of the asm would define them again. `scope`: the `{`
/// earlier asm statements of the function left open.
pub(super) fn unscoped_definitions(ptx: &str, labels: &[(usize, usize)], scope: usize) -> Vec<(usize, &'static str)> {
    if scope > 0 {
        return Vec::new();
    }
    let reg = ptx.match_indices(".reg").map(|(off, _)| off).find(|off| brace_depth(ptx, *off) == 0);
    let label = labels.iter().find(|(_, depth)| *depth == 0).map(|(off, _)| *off);
    [(reg, "a `.reg` declaration"), (label, "a label")].into_iter().filter_map(|(off, what)| Some((off?, what))).collect()
}

fn brace_depth(t: &str, offset: usize) -> usize {
    let mut d = 0usize;
    for c in t[..offset].chars() {
        match c {
            '{' => d += 1,
            '}' => d = d.saturating_sub(1),
            _ => {}
        }
    }
    d
}

/// The first changing special register the template reads (`%%clock` or `%clock`).
pub(super) fn changing_register_read(t: &str) -> Option<(usize, String)> {
    for (off, _) in t.match_indices('%') {
        let rest = t[off..].trim_start_matches('%');
        let word: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if is_changing_register(&word) {
            return Some((off, word));
        }
    }
    None
}

/// Whether operand `n`, which `stmts[i]` writes under its predicate, holds a value written by
/// the template whatever the predicate: an unpredicated statement before it writes `n`
/// (DeepSpeed's `mov.b32 %0, 0; @p ld.shared.u32 %0, [%1];`), or another statement writes it
/// under the opposite guard (`@p` and `@!p`). `refs` reads a destination's operand numbers.
pub(super) fn written_either_way(stmts: &[Statement<'_>], i: usize, n: usize, refs: impl Fn(&str) -> Vec<usize>) -> bool {
    let writes = |s: &Statement<'_>| !writes_memory(s.mnemonic) && refs(destination(s.operands)).contains(&n);
    let guard = stmts[i].guard;
    let opposite = |g: &str| g.strip_prefix('!') == Some(guard) || guard.strip_prefix('!') == Some(g);
    stmts[..i].iter().any(|s| !s.predicated && writes(s)) || stmts.iter().any(|s| s.predicated && opposite(s.guard) && writes(s))
}

/// `%N` references in a piece of template.
pub(super) fn operand_refs(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && b.get(i + 1) == Some(&b'%') {
            i += 2;
            continue;
        }
        if b[i] == b'%' {
            let d: String = text[i + 1..].chars().take_while(char::is_ascii_digit).collect();
            if let Ok(n) = d.parse() {
                out.push(n);
            }
        }
        i += 1;
    }
    out
}
