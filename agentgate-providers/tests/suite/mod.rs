//! The integration test modules (see `tests/all.rs`).

mod anthropic;
mod bounded_faults;
mod common;
mod conformance;
mod docs;
mod engine;
mod faults;
mod gemini;
mod large_bodies;
mod openai;
mod recorded_fixes;
mod replay;
mod responses;
mod sse_split;
mod stalled;
mod tool_images;
mod user_parts;
