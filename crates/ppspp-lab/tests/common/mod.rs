//! Helpers shared by the lab's integration tests.

pub mod traced;
