//! The test modules.

mod faults;
