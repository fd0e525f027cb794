//! The typed launch methods turn argument mistakes into compile errors (no GPU needed).

#[test]
fn wrong_arguments_do_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
