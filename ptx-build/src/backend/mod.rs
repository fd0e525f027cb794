//! The back end: a Rust crate's bitcode linked with libdevice and taken to PTX per arch
//! (`link`, with the IR rewrites of `crate_ids`, of `shared_memory`, `atomics`, `kernel_ir` and the
//! `prepass`; `arch_errors` explains what an arch lacks), PTX to cubins (`ptxas`), and reading PTX (`ptx`), which the front ends and the
//! embed stage use too.

pub mod arch_errors;
pub mod atomics;
pub mod bitcode;
pub(crate) mod crate_ids;
pub mod kernel_ir;
pub mod link;
pub mod prepass;
pub mod ptx;
pub mod ptxas;
pub mod shared_memory;
