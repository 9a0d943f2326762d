//! The test modules.

mod spill_read;
