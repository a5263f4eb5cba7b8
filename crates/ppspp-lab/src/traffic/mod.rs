//! Cross traffic: constant-bit-rate and Pareto on/off UDP sources, a UDP
//! sink, and a small sans-IO TCP NewReno model for bulk flows. Every one is
//! an [`crate::agent::Agent`]; sources take their randomness from a seeded
//! generator handed in, so runs are reproducible.

pub mod cbr;
pub mod onoff;
pub mod sink;
pub mod stream;
pub mod tcp;

pub use cbr::{CbrConfig, CbrSource};
pub use onoff::{OnOffConfig, ParetoOnOff};
pub use sink::{DelayStats, FlowStats, UdpSink};
pub use stream::{RecvStream, SendStream};
pub use tcp::{
    Cubic, NewReno, RtoConfig, TcpCc, TcpCongestion, TcpReceiver, TcpReceiverConfig,
    TcpReceiverStats, TcpSender, TcpSenderConfig, TcpSenderStats, DEFAULT_ACK_DELAY, MSS,
};
