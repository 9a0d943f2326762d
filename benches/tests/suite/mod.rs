//! The test modules.

mod load;
