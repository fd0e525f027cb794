//! The typed launch methods turn argument mistakes into compile errors (no GPU needed).

// trybuild compiles a project of its own (about 1.5 min in a fresh target dir on 2 cores):
// held back from `cargo test`; CI runs it.
#[test]
#[ignore = "slow: `cargo test --workspace --test compile_fail -- --ignored` runs it (CI does)"]
fn wrong_arguments_do_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
