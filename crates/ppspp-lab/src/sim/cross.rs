//! Cross-traffic flows in the simulator: each flow is a source agent on
//! one host and a sink agent on another (a TCP or uTP sender and receiver,
//! or a UDP source and sink), driven through the `Agent` interface.

use ppspp_core::time::Instant;

use crate::agent::Agent;
use crate::packet::{FlowId, HostId};
use crate::rng::{rng, Stream};
use crate::scenario::{Flow, FlowKind};
use crate::traffic::{
    CbrConfig, CbrSource, FlowStats, OnOffConfig, ParetoOnOff, TcpReceiver, TcpReceiverConfig,
    TcpSender, TcpSenderConfig, UdpSink, UtpReceiver, UtpReceiverConfig, UtpSender,
    UtpSenderConfig,
};

/// Flow ids of cross traffic start here; below are PPSPP flows, one per
/// sending host.
pub const CROSS_FLOW_BASE: u32 = 1 << 30;

/// The sending end.
pub enum Source {
    /// TCP bulk sender.
    Tcp(Box<TcpSender>),
    /// uTP bulk sender.
    Utp(Box<UtpSender>),
    /// Constant bit rate.
    Cbr(CbrSource),
    /// Pareto on/off.
    OnOff(ParetoOnOff),
}

/// The receiving end.
pub enum Sink {
    /// TCP receiver.
    Tcp(Box<TcpReceiver>),
    /// uTP receiver.
    Utp(Box<UtpReceiver>),
    /// UDP sink.
    Udp(UdpSink),
}

/// One flow with both ends and their timers.
pub struct CrossFlow {
    /// Its kind.
    pub kind: FlowKind,
    /// Sending host.
    pub src: HostId,
    /// Receiving host.
    pub dst: HostId,
    /// Sending end.
    pub source: Source,
    /// Receiving end.
    pub sink: Sink,
    /// Queued timer of each end (source, sink).
    pub timers: [Option<Instant>; 2],
}

impl CrossFlow {
    /// Builds flow number `index` of `spec` between `src` and `dst`.
    pub fn new(index: u32, spec: &Flow, src: HostId, dst: HostId, seed: u64) -> CrossFlow {
        let flow = FlowId(CROSS_FLOW_BASE + index);
        let start = Instant::ZERO + spec.start.map_or(std::time::Duration::ZERO, |d| d.0);
        let stop = spec.stop.map(|d| Instant::ZERO + d.0);
        let size = spec.packet_size.map_or(1000, |b| b.0 as u32);
        let rate = spec.rate.map_or(1_000_000, |r| r.0);
        let (source, sink) = match spec.kind {
            FlowKind::Tcp => {
                let mut c = TcpSenderConfig::new(src, dst, flow, start);
                c.total_bytes = spec.bytes.map(|b| b.0);
                c.cc = spec.cc.unwrap_or_default();
                c.sack = spec.sack.unwrap_or(false);
                c.handshake = spec.handshake.unwrap_or(false);
                let sack = c.sack;
                (
                    Source::Tcp(Box::new(TcpSender::new(c))),
                    Sink::Tcp(Box::new(TcpReceiver::new(TcpReceiverConfig {
                        sack,
                        ..TcpReceiverConfig::new(dst, src, flow)
                    }))),
                )
            }
            FlowKind::Utp => {
                let mut c = UtpSenderConfig::new(src, dst, flow, start);
                c.total_bytes = spec.bytes.map(|b| b.0);
                c.handshake = spec.handshake.unwrap_or(false);
                if let Some(t) = spec.target {
                    c.target = t.0;
                }
                (
                    Source::Utp(Box::new(UtpSender::new(c))),
                    Sink::Utp(Box::new(UtpReceiver::new(UtpReceiverConfig::new(
                        dst, src, flow,
                    )))),
                )
            }
            FlowKind::Cbr => {
                let mut c = CbrConfig::new(src, dst, flow, rate, size, start);
                c.stop = stop;
                // A CBR flow stands for a video call (E4): its sink keeps
                // every sample for the quantiles of delay and inter-arrival
                // (8 bytes per packet each; on/off flows keep summaries).
                (
                    Source::Cbr(CbrSource::new(c)),
                    Sink::Udp(UdpSink::keeping_samples()),
                )
            }
            FlowKind::ParetoOnOff => {
                let c = OnOffConfig {
                    src,
                    dst,
                    flow,
                    burst_rate_bps: rate,
                    size,
                    mean_on: spec
                        .mean_on
                        .map_or(std::time::Duration::from_secs(1), |d| d.0),
                    mean_off: spec.mean_off.map_or(std::time::Duration::ZERO, |d| d.0),
                    shape: spec.shape.unwrap_or(1.5),
                    start,
                    stop,
                };
                let r = rng(seed, Stream::Flow, u64::from(index));
                (
                    Source::OnOff(ParetoOnOff::new(c, r)),
                    Sink::Udp(UdpSink::new()),
                )
            }
        };
        CrossFlow {
            kind: spec.kind,
            src,
            dst,
            source,
            sink,
            timers: [None, None],
        }
    }

    /// End 0 (source) or 1 (sink) as an agent.
    pub fn end(&mut self, end: usize) -> &mut dyn Agent {
        if end == 0 {
            match &mut self.source {
                Source::Tcp(a) => a.as_mut(),
                Source::Utp(a) => a.as_mut(),
                Source::Cbr(a) => a,
                Source::OnOff(a) => a,
            }
        } else {
            match &mut self.sink {
                Sink::Tcp(a) => a.as_mut(),
                Sink::Utp(a) => a.as_mut(),
                Sink::Udp(a) => a,
            }
        }
    }

    /// Payload bytes delivered to the sink so far (TCP, uTP: in order).
    pub fn delivered(&self) -> u64 {
        match &self.sink {
            Sink::Tcp(r) => r.delivered(),
            Sink::Utp(r) => r.delivered(),
            Sink::Udp(s) => s.total_bytes(),
        }
    }

    /// Packets the source sent.
    pub fn packets_sent(&self) -> u64 {
        match &self.source {
            Source::Tcp(s) => s.stats().segments_sent,
            Source::Utp(s) => s.stats().packets_sent,
            Source::Cbr(s) => s.packets_sent(),
            Source::OnOff(s) => s.packets_sent(),
        }
    }

    /// What the sink of a UDP flow (CBR, on/off) saw of it.
    pub fn udp_stats(&self) -> Option<&FlowStats> {
        match &self.sink {
            Sink::Udp(s) => s.flows().next().map(|(_, f)| f),
            _ => None,
        }
    }

    /// Retransmissions and timeouts of a TCP or uTP flow (the
    /// `tcp_retransmits` and `tcp_timeouts` columns of `flows.csv`).
    pub fn tcp_losses(&self) -> (u64, u64) {
        match &self.source {
            Source::Tcp(s) => (s.stats().retransmits, s.stats().timeouts),
            Source::Utp(s) => (s.stats().retransmits, s.stats().timeouts),
            _ => (0, 0),
        }
    }
}
