//! Refusing a handshake (RFC 7574 §8.4: a HANDSHAKE whose source channel
//! is 0), and the peer addresses a refusal of a full swarm carries.
//!
//! A newcomer that learned of the swarm from us alone (ppspp's "PEX via the
//! seeder", seed paper 000 §IV-B) knows no one else when we refuse it: it
//! waits for its next look at the tracker, and in E2's flash crowd of 208
//! leechers those beyond the seeder's 64 places started in waves minutes
//! apart (mean start-up 136.5 s against 7.6 s with names). So a refusal for
//! want of room carries PEX_RES addresses (§3.10) of peers we have
//! channels with, picked at random so that the refused spread over them.
//! Bounds: only to an initiator that lists PEX_RES among its supported
//! messages (§7.10; libswift sends no such list and hears a bare
//! refusal), and never more bytes than the handshake we answer (no
//! amplification before a handshake completes: a spoofed handshake buys
//! no more than it cost). A 50-byte handshake gets five IPv4 addresses.

use std::net::SocketAddr;

use super::{Endpoint, Transmit, MAX_PENDING_REFUSALS};
use crate::proto::event::DropReason;
use crate::proto::pex::sample_shareable;
use crate::proto::SwarmHandle;
use crate::wire::{
    ChannelId, DatagramWriter, HandshakeOptions, Message, MessageType, SwarmParams, PPSPP_VERSION,
};

/// The bare refusal: channel id, HANDSHAKE, source channel 0, version
/// option and end of options.
const REFUSAL_LEN: usize = 12;

/// A PEX_RESv4 message: type, IPv4 address, port.
const PEX_RES_V4_LEN: usize = 7;

/// A refusal waiting to be sent.
#[derive(Clone, Copy, Debug)]
pub(super) struct Refusal {
    to: SocketAddr,
    channel: ChannelId,
    /// The handshake's length: the most the refusal may take.
    budget: usize,
    /// The full swarm whose peers it may name, if it may name any.
    swarm: Option<SwarmHandle>,
}

impl Endpoint {
    /// Refuses the handshake of `to`'s channel `channel`, `received` bytes
    /// long. `full` is the swarm it asked for, when room was all it
    /// lacked and the handshake listed PEX_RES as supported: the refusal
    /// names some of its peers.
    pub(super) fn refuse(
        &mut self,
        to: SocketAddr,
        channel: ChannelId,
        received: usize,
        full: Option<SwarmHandle>,
    ) {
        super::trace::refused(to);
        self.stats.count_drop(DropReason::Refused);
        // Never more than the handshake it answers.
        if received >= REFUSAL_LEN && self.refusals.len() < MAX_PENDING_REFUSALS {
            self.refusals.push_back(Refusal {
                to,
                channel,
                budget: received,
                swarm: full,
            });
        }
    }

    /// The next refusal, written into `buf`.
    pub(super) fn next_refusal(&mut self, buf: &mut [u8]) -> Option<Transmit> {
        let r = self.refusals.pop_front()?;
        let options = HandshakeOptions {
            version: Some(PPSPP_VERSION),
            ..HandshakeOptions::default()
        };
        let budget = r.budget.min(self.config.max_datagram).min(buf.len());
        let mut w =
            DatagramWriter::new(&mut buf[..budget], r.channel, SwarmParams::default()).ok()?;
        w.push(&Message::Handshake {
            source: ChannelId::ZERO,
            options,
        })
        .ok()?;
        for addr in self.refusal_addresses(r) {
            let m = match addr {
                SocketAddr::V4(a) => Message::PexResV4(a),
                SocketAddr::V6(a) => Message::PexResV6(a),
            };
            // The budget is spent: the rest stay unnamed.
            if w.push(&m).is_err() {
                break;
            }
            self.stats.refusal_addresses += 1;
        }
        self.stats.messages_sent.merge(w.tally());
        Some(Transmit {
            destination: r.to,
            len: w.finish(),
        })
    }

    /// Peers of the full swarm that `r` may be told of, in random order;
    /// none when it may be told of none.
    fn refusal_addresses(&mut self, r: Refusal) -> Vec<SocketAddr> {
        let Some(swarm) = r.swarm.and_then(|h| self.swarms.get(h)) else {
            return Vec::new();
        };
        // As many as fit (IPv4's are the shortest), drawn from all.
        let fit = r.budget.saturating_sub(REFUSAL_LEN) / PEX_RES_V4_LEN;
        let n = fit.min(self.config.pex_max_addresses);
        sample_shareable(&swarm.peers, r.to, n, &mut self.rng)
    }
}

/// Whether a handshake's options say its sender reads PEX_RES (RFC 7574
/// §7.10), so that a refusal may name peers.
pub(super) fn reads_pex(options: &HandshakeOptions<'_>) -> bool {
    options
        .supported_messages
        .is_some_and(|m| m.supports(MessageType::PexResV4) && m.supports(MessageType::PexResV6))
}
