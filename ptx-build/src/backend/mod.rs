//! The back end: a Rust crate's bitcode linked with libdevice and taken to PTX per arch
//! (`link`, with the IR rewrites of `shared_memory`), PTX to cubins (`ptxas`), and reading PTX
//! (`ptx`), which the front ends and the embed stage use too.

pub mod bitcode;
pub mod link;
pub mod ptx;
pub mod ptxas;
pub mod shared_memory;
