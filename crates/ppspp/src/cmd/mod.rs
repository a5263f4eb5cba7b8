//! One module per subcommand, and what they share.

pub mod args;
pub mod contacts;
pub mod get;
pub mod hash;
pub mod lab;
pub mod live;
pub mod live_url;
pub mod log;
pub mod node;
pub mod output;
pub mod progress;
pub mod seed;
pub mod stream;
pub mod uploads;
pub mod url;
