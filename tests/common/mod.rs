//! Helpers shared by the integration tests (tests/README.md, "Shared helpers").

pub mod fixture_launch;
pub mod isa_tables;
pub mod run;
pub mod skip;
pub mod source;
pub mod tiny_lesson;
