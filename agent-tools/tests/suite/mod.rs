//! Integration suites.

mod sandbox;
