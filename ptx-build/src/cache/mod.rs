//! Caches. Every step that runs a tool is a [`CachedStep`]: keyed by content (`hash`), recorded
//! in the target dir by a stamp written atomically (`fs`), and shared between checkouts and
//! target dirs through the machine's [`StepCache`] (`store`).

mod fs;
mod hash;
mod step;
mod store;

pub use fs::{
    create_dir_all, read_stamp, remove_scratch, remove_stale, rename_into_place, scratch_path, write_atomic, write_stamp, ScratchDir,
};
pub use hash::{bytes_hash, file_hash, Key};
pub use step::{CachedStep, Done, Outcome};
pub use store::{Stats, StepCache};
