//! The gateway's connection budget: at most `max` HTTP connections at once,
//! and which one gives way when a new client arrives at the cap.
//!
//! A connection costs a file descriptor, kernel socket buffers and our
//! response buffers; without a cap, clients that open connections and never
//! read take the process's memory and descriptors (issue 21, items 4–5).
//! A plain cap would let those same clients lock out everyone else, so at
//! the cap a connection that is doing nothing for anybody gives way, the
//! way nginx closes idle keep-alive connections when it runs short: one
//! that has waited at least [`GRACE`] for a request head (a new connection
//! that sends nothing, a slowloris, a keep-alive connection between
//! requests), or whose client has not taken a byte for at least `GRACE`.
//! A response that waits for the download, and a player that reads, never
//! give way; when every connection is such, the newcomer is refused.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// How long a connection must have been idle or stalled before a newcomer
/// at the cap may take its place: long next to the moment between a
/// client's connect and its request, or between a reading player's reads.
pub const GRACE: Duration = Duration::from_secs(2);

/// "Not stalled" in [`Conn::stalled_since`].
const NOT_STALLED: u64 = u64::MAX;

/// One connection's state, shared by its task, its responses and the
/// budget.
#[derive(Debug)]
pub struct Conn {
    epoch: Instant,
    /// Responses in progress (from the request head to the end of the body).
    responses: AtomicU32,
    /// When the connection last had no response in progress (ms since the
    /// epoch): accepted, or its last response ended.
    idle_since: AtomicU64,
    /// Since when a write to the client has been waiting for room, or
    /// [`NOT_STALLED`].
    stalled_since: AtomicU64,
    /// Tells the connection's task to close it.
    close: Notify,
}

impl Conn {
    fn new(epoch: Instant) -> Self {
        let c = Conn {
            epoch,
            responses: AtomicU32::new(0),
            idle_since: AtomicU64::new(0),
            stalled_since: AtomicU64::new(NOT_STALLED),
            close: Notify::new(),
        };
        c.idle_since.store(c.now_ms(), Ordering::Relaxed);
        c
    }

    fn now_ms(&self) -> u64 {
        Instant::now().duration_since(self.epoch).as_millis() as u64
    }

    /// A write could not go on: the client's window and our socket buffer
    /// are full. Only the first of a run of such counts.
    pub fn write_blocked(&self) {
        let now = self.now_ms();
        let _ = self.stalled_since.compare_exchange(
            NOT_STALLED,
            now,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }

    /// A write went through: the client reads.
    pub fn write_progressed(&self) {
        self.stalled_since.store(NOT_STALLED, Ordering::Relaxed);
    }

    /// A response starts; it is in progress until the guard drops.
    pub fn busy(self: &Arc<Self>) -> Busy {
        self.responses.fetch_add(1, Ordering::Relaxed);
        Busy(self.clone())
    }

    /// Resolves when the budget gave this connection's place to another.
    pub async fn evicted(&self) {
        self.close.notified().await;
    }

    /// How long this connection has been of no use to anyone at `now`
    /// (ms), or `None` while it serves a client that reads.
    fn useless_for(&self, now: u64) -> Option<u64> {
        let stalled = self.stalled_since.load(Ordering::Relaxed);
        if stalled != NOT_STALLED {
            return Some(now.saturating_sub(stalled));
        }
        if self.responses.load(Ordering::Relaxed) == 0 {
            return Some(now.saturating_sub(self.idle_since.load(Ordering::Relaxed)));
        }
        None
    }
}

/// A response in progress on a connection.
#[derive(Debug)]
pub struct Busy(Arc<Conn>);

impl Drop for Busy {
    fn drop(&mut self) {
        let c = &self.0;
        c.idle_since.store(c.now_ms(), Ordering::Relaxed);
        c.responses.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The connections admitted and the cap.
#[derive(Debug)]
pub struct Budget {
    max: usize,
    epoch: Instant,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    next_id: u64,
    conns: HashMap<u64, Arc<Conn>>,
}

/// A place in the budget, given back when dropped.
#[derive(Debug)]
pub struct Permit {
    budget: Arc<Budget>,
    id: u64,
    conn: Arc<Conn>,
}

impl Permit {
    /// The connection's shared state.
    pub fn conn(&self) -> &Arc<Conn> {
        &self.conn
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        // An evicted connection's entry is gone already; ids are unique.
        self.budget.lock().conns.remove(&self.id);
    }
}

impl Budget {
    /// A budget of `max` connections (at least one).
    pub fn new(max: usize) -> Arc<Self> {
        Arc::new(Budget {
            max: max.max(1),
            epoch: Instant::now(),
            inner: Mutex::default(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // The map stays consistent across a panic: every update is one call.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Connections admitted now.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().conns.len()
    }

    /// A place for a new connection: a free one, or that of the connection
    /// that has been of no use the longest, if that is at least
    /// [`GRACE`] (it is told to close). `None` when every place serves a
    /// client.
    pub fn admit(self: &Arc<Self>) -> Option<Permit> {
        let mut inner = self.lock();
        if inner.conns.len() >= self.max {
            let now = Instant::now().duration_since(self.epoch).as_millis() as u64;
            let grace = GRACE.as_millis() as u64;
            let victim = inner
                .conns
                .iter()
                .filter_map(|(id, c)| c.useless_for(now).map(|t| (t, *id)))
                .filter(|(t, _)| *t >= grace)
                .max()?;
            if let Some(c) = inner.conns.remove(&victim.1) {
                // notify_one keeps the wake-up if the task is not waiting
                // yet.
                c.close.notify_one();
            }
        }
        let id = inner.next_id;
        inner.next_id += 1;
        let conn = Arc::new(Conn::new(self.epoch));
        inner.conns.insert(id, conn.clone());
        Some(Permit {
            budget: self.clone(),
            id,
            conn,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn at_the_cap_the_longest_useless_connection_gives_way() {
        let b = Budget::new(2);
        let reading = b.admit().unwrap();
        let _busy = reading.conn().busy();
        let idle = b.admit().unwrap();
        // Both places taken and the idle one too young to give way.
        assert!(b.admit().is_none());
        tokio::time::advance(GRACE).await;
        let newcomer = b.admit().expect("the idle connection gives way");
        assert_eq!(b.len(), 2);
        // It was told to close; the reading one was not.
        tokio::time::timeout(Duration::from_millis(1), idle.conn().evicted())
            .await
            .expect("told to close");
        assert!(
            tokio::time::timeout(Duration::from_millis(1), reading.conn().evicted())
                .await
                .is_err()
        );
        drop(idle);
        assert_eq!(b.len(), 2, "an evicted permit frees nothing twice");
        drop(newcomer);
        assert_eq!(b.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_stalled_response_gives_way_and_a_waiting_one_does_not() {
        let b = Budget::new(2);
        let waiting = b.admit().unwrap();
        let _w = waiting.conn().busy();
        let stalled = b.admit().unwrap();
        let _s = stalled.conn().busy();
        stalled.conn().write_blocked();
        tokio::time::advance(GRACE / 2).await;
        // Progress resets the stall.
        stalled.conn().write_progressed();
        stalled.conn().write_blocked();
        tokio::time::advance(GRACE / 2).await;
        assert!(b.admit().is_none(), "stalled only GRACE/2");
        tokio::time::advance(GRACE).await;
        let _n = b.admit().expect("the stalled one gives way");
        tokio::time::timeout(Duration::from_millis(1), stalled.conn().evicted())
            .await
            .expect("told to close");
    }
}
