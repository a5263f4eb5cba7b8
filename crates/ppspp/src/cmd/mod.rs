//! One module per subcommand.

pub mod args;
pub mod hash;
