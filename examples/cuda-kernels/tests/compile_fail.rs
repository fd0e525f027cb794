//! A template kernel's generic method compiles only for the types the .cu file instantiates
//! (no GPU needed).

#[test]
fn uninstantiated_template_types_do_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
