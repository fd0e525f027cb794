//! Text formats several stages read: C/C++ tokens (`c_lex`, for kernel signatures and inline
//! PTX) make-style dependency files (`depfile`, rustc's and nvcc's), and a preprocessed unit's line
//! markers (`line_markers`), and how much code a .cu file holds once its macros expand (`weight`,
//! to start the longest compiles first).

pub mod c_lex;
pub mod depfile;
pub mod line_markers;
pub mod weight;
