//! The test modules; shared helpers are in `common`.

mod common;
mod compaction;
mod conformance;
mod engine_loop;
mod layering;
mod session_file;
mod task;
