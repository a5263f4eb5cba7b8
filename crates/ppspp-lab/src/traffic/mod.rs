//! Cross traffic: constant-bit-rate and Pareto on/off UDP sources, a UDP
//! sink, a small sans-IO TCP model (NewReno or CUBIC) and a uTP model
//! (BEP 29, libutp's LEDBAT) for bulk flows and application streams. Every
//! one is an [`crate::agent::Agent`]; sources take their randomness from a
//! seeded generator handed in, so runs are reproducible.

pub mod cbr;
pub mod onoff;
pub mod sink;
pub mod stream;
pub mod tcp;
#[cfg(test)]
mod test_wire;
pub mod utp;

pub use cbr::{CbrConfig, CbrSource};
pub use onoff::{OnOffConfig, ParetoOnOff};
pub use sink::{DelayStats, FlowStats, UdpSink};
pub use stream::{RecvStream, SendStream};
pub use tcp::{
    Cubic, NewReno, RtoConfig, TcpCc, TcpCongestion, TcpReceiver, TcpReceiverConfig,
    TcpReceiverStats, TcpSender, TcpSenderConfig, TcpSenderStats, DEFAULT_ACK_DELAY, MSS,
};
pub use utp::{
    UtpReceiver, UtpReceiverConfig, UtpReceiverStats, UtpSender, UtpSenderConfig, UtpSenderStats,
    UTP_PACKET_SIZE,
};
