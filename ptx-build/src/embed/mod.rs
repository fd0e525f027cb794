//! The embed stage, run for a Builder: kernel signatures from the sources (`signature`), bound
//! to the PTX entries (`demangle` for C++ names), host type paths (`host_types`), and the
//! generated module (`codegen`).

pub mod codegen;
pub mod demangle;
pub mod host_types;
pub mod signature;
