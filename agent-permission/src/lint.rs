//! Placeholder: being written now.
