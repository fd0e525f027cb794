//! The crate's module's first `opt` run, before the target's pipeline: jump threading.
//!
//! `for x in array` over a small `[T; N]` by value (`core::array::IntoIter`) leaves LLVM a loop
//! whose counter passes through `next()`'s `Option`: the exit test is made twice, once in
//! `next()` and once on its result, and the counter reaches the latch through a phi that also
//! takes the exhausted value. Jump threading folds the second test away; without it, scalar
//! evolution cannot count the trips, the loop is not unrolled, and the array, indexed by the
//! counter, lives in local memory (a `__local_depot` frame, `st.local`/`ld.local`). LLVM runs
//! jump threading only for targets whose branches cannot diverge (NVPTX's can), and rustc's
//! MIR jump threading is off for GPU targets too, so the loop stays. This run gives `opt` the
//! module without its target triple: jump threading then runs as on a CPU, once, before the
//! NVPTX pipeline. It duplicates no convergent call (barriers, shuffles), and by default never
//! threads across a loop header, so it makes no loop irreducible; on kernels without such
//! loops (device-tour's) the PTX is the same up to register numbering.

use std::borrow::Cow;

/// `opt`'s `-passes` for this run.
pub const PASSES: &str = "function(jump-threading)";

/// `ir` (the text of `llvm-dis`) without its `target triple` line, so that `opt` builds no
/// target (and no branch-divergence answer) for it. The data layout stays; the main `opt` run
/// sets the triple again (`-mtriple`).
pub fn without_target(ir: &str) -> Cow<'_, str> {
    match ir.lines().find(|l| l.starts_with("target triple = ")) {
        Some(line) => Cow::Owned(ir.replacen(&format!("{line}\n"), "", 1)),
        None => Cow::Borrowed(ir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_triple_goes_and_the_data_layout_stays() {
        let ir = "; ModuleID = 'k'\ntarget datalayout = \"e-p6:32:32-i64:64\"\ntarget triple = \"nvptx64-nvidia-cuda\"\n\ndefine void @f() {\n  ret void\n}\n";
        assert_eq!(
            without_target(ir),
            "; ModuleID = 'k'\ntarget datalayout = \"e-p6:32:32-i64:64\"\n\ndefine void @f() {\n  ret void\n}\n"
        );
        let bare = "define void @f() {\n  ret void\n}\n";
        assert!(matches!(without_target(bare), Cow::Borrowed(_)));
    }
}
