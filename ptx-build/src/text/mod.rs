//! Text formats several stages read: C/C++ tokens (`c_lex`, for kernel signatures and inline
//! PTX) and make-style dependency files (`depfile`, rustc's and nvcc's).

pub mod c_lex;
pub mod depfile;
