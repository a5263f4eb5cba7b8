//! How long a `ppspp stream` runs, VoD or live: until Ctrl-C, until the
//! player it started exits, or until the swarm fails (every peer failed,
//! or the storage did). Meanwhile peers that refused or went silent are
//! tried again.

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};
use ppspp_core::proto::{Event, SwarmHandle};
use ppspp_udp::NodeHandle;
use tokio::sync::mpsc;

use super::{player_outcome, Player, Waiter};
use crate::cmd::contacts::Contacts;
use crate::cmd::node::interrupted;

/// What the loop needs of the swarm beyond its events.
pub struct Watch<'a> {
    pub node: &'a NodeHandle,
    pub swarm: SwarmHandle,
    pub events: &'a mut mpsc::UnboundedReceiver<Event>,
    pub contacts: &'a mut Contacts,
    /// The swarm id, for the failure message.
    pub id: &'a str,
    /// What a storage failure is called ("store the content", …).
    pub storing: &'static str,
}

/// Runs until interrupted, the player exits or the swarm fails.
/// `needs_peers` says, after each event, whether losing every peer is
/// fatal (complete content needs none); `on_event` sees each event first.
pub async fn run(
    w: Watch<'_>,
    player: Option<(Player, Waiter)>,
    mut on_event: impl FnMut(&Event),
    needs_peers: impl Fn() -> bool,
) -> Result<()> {
    tokio::select! {
        r = interrupted() => r.map_err(anyhow::Error::from),
        r = async {
            match player {
                Some((p, h)) => Some((p, h.await)),
                None => std::future::pending().await,
            }
        } => match r {
            Some((p, Ok(Ok(status)))) => player_outcome(p, status),
            Some((p, Ok(Err(e)))) => Err(anyhow!("waiting for {}: {e}", p.program())),
            Some((_, Err(e))) => Err(anyhow!(e)),
            None => Ok(()),
        },
        r = async {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                let ev = tokio::select! {
                    ev = w.events.recv() => ev,
                    _ = tick.tick() => {
                        for peer in w.contacts.due(Instant::now()) {
                            w.node.connect(w.swarm, peer)?;
                        }
                        continue;
                    }
                };
                let Some(ev) = ev else {
                    return Err(anyhow!("the node stopped"));
                };
                w.contacts.on_event(&ev, Instant::now());
                if let Event::StorageError { error, .. } = &ev {
                    return Err(anyhow!("cannot {}: {error}", w.storing));
                }
                on_event(&ev);
                // A player would wait forever for what nobody can send.
                if needs_peers() && w.contacts.all_failed() && !w.contacts.retrying() {
                    bail!("{}", w.contacts.failure(w.id));
                }
            }
        } => r,
    }
}
