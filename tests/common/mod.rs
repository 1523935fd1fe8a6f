//! Helpers shared by the integration tests.

pub mod isa_tables;
