//! The test modules.

mod one_call;
