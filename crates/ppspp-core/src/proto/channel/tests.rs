//! Tests of a channel as a whole: its sub-states' deadlines combined, and
//! the inputs the endpoint and the choking policy give it.

use std::time::Duration;

use super::fixture::with_ctx;
use super::{Channel, Offer, Opening, Outcome, State};
use crate::proto::event::CloseReason;
use crate::proto::{Compat, Ctx, EndpointConfig, SwarmHandle};
use crate::time::Instant;
use crate::wire::{ChannelId, ChunkAddressing, SwarmParams};

fn open(cfg: &EndpointConfig, now: Instant, state: State) -> Channel {
    with_ctx(cfg, now, |ctx| open_in(ctx, state))
}

fn open_in(ctx: &mut Ctx<'_>, state: State) -> Channel {
    open_in_swarm(ctx, state, false)
}

fn open_in_swarm(ctx: &mut Ctx<'_>, state: State, live: bool) -> Channel {
    Channel::new(
        ctx,
        Opening {
            local: ChannelId(9),
            peer: "192.0.2.1:7000".parse().unwrap(),
            swarm: SwarmHandle(0),
            state,
            chunk_size: 1024,
            params: SwarmParams::default(),
            have_log_len: 0,
            cancel_log_len: 0,
            live,
        },
    )
}

#[test]
fn an_initiator_is_due_at_once_and_a_closed_channel_until_reaped() {
    let cfg = EndpointConfig::default();
    let t0 = Instant::ZERO + Duration::from_secs(1);
    let mut ch = open(&cfg, t0, State::Initiating);
    assert_eq!(ch.state(), State::Initiating);
    assert_eq!(ch.next_deadline(&cfg, t0, 0), Some(t0));
    ch.close(CloseReason::Local, true);
    // No remote channel yet: nobody to tell.
    assert!(ch.is_closing() && !ch.close_notify());
    let later = t0 + Duration::from_secs(5);
    assert_eq!(ch.next_deadline(&cfg, later, 0), Some(later));
    // The first reason stands.
    ch.close(CloseReason::Dead, false);
    assert_eq!(ch.take_close_reason(), Some(CloseReason::Local));
    assert_eq!(ch.take_close_reason(), None);
}

#[test]
fn a_responder_answers_at_once_then_waits_for_the_third_datagram() {
    let cfg = EndpointConfig::default();
    let t0 = Instant::ZERO;
    let mut ch = open(&cfg, t0, State::Responding);
    assert_eq!(
        ch.next_deadline(&cfg, t0, 0),
        Some(t0 + cfg.half_open_timeout)
    );
    let offer = Offer {
        addressing: ChunkAddressing::ChunkRanges32,
        extended: true,
        window: None,
    };
    ch.handle_opening(ChannelId(4), &offer, Compat::Auto);
    assert_eq!(ch.remote(), ChannelId(4));
    assert_eq!(ch.next_deadline(&cfg, t0, 0), Some(t0));
    ch.handle_retransmitted_opening(40);
    assert_eq!(ch.next_deadline(&cfg, t0, 0), Some(t0));
    // The half-open timeout closes it.
    let late = t0 + cfg.half_open_timeout;
    let out = with_ctx(&cfg, late, |ctx| ch.on_timeout(ctx));
    assert_eq!(out, Outcome::default());
    assert!(ch.is_closing());
}

#[test]
fn choking_a_peer_is_remembered_and_drops_its_requests() {
    let cfg = EndpointConfig::default();
    let t0 = Instant::ZERO;
    let mut ch = open(&cfg, t0, State::Established);
    assert!(!ch.choking_remote() && !ch.choke_dirty());
    let t1 = t0 + Duration::from_secs(3);
    ch.set_choke(true, t1);
    assert!(ch.choking_remote() && ch.choke_dirty());
    assert_eq!(ch.choke_changed(), t1);
    assert_eq!(ch.queued_chunks(), 0);
    // A change is due at once.
    assert_eq!(ch.next_deadline(&cfg, t1, 0), Some(t1));
    ch.note_slot();
    assert!(!ch.had_slot(), "a choked peer holds no slot");
    ch.set_choke(false, t1);
    ch.note_slot();
    assert!(ch.had_slot());
    ch.forget_slot();
    assert!(!ch.had_slot());
}

#[test]
fn an_established_channel_waits_for_keepalive_and_haves() {
    let cfg = EndpointConfig::default();
    let t0 = Instant::ZERO;
    let ch = open(&cfg, t0, State::Established);
    // The first HAVE sweep is pending: its timer is `have_interval`.
    let have = t0 + cfg.have_interval;
    let keep = t0 + cfg.keepalive_interval;
    assert_eq!(ch.next_deadline(&cfg, t0, 0), Some(have.min(keep)));
    assert!(ch.haves_pending(0));
}

#[test]
fn a_live_channel_waits_the_live_have_interval() {
    let cfg = EndpointConfig {
        have_interval: Duration::from_millis(500),
        live_have_interval: Duration::from_millis(70),
        ..EndpointConfig::default()
    };
    let t0 = Instant::ZERO;
    let live = with_ctx(&cfg, t0, |ctx| open_in_swarm(ctx, State::Established, true));
    assert_eq!(
        live.next_deadline(&cfg, t0, 0),
        Some(t0 + Duration::from_millis(70))
    );
    let vod = open(&cfg, t0, State::Established);
    assert_eq!(
        vod.next_deadline(&cfg, t0, 0),
        Some(t0 + Duration::from_millis(500))
    );
}
