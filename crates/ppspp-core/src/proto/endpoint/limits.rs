//! The endpoint's upload and download rate limits, and the channels they
//! hold back: a channel that could not send a DATA (upload) or a REQUEST
//! (download) for want of tokens waits here, and is woken once the bucket
//! holds what it waited for.

use crate::proto::config::EndpointConfig;
use crate::proto::ratelimit::TokenBucket;
use crate::time::Instant;
use crate::wire::ChannelId;

/// One direction's limit and what waits for it.
#[derive(Default)]
pub(crate) struct Limit {
    pub bucket: Option<TokenBucket>,
    /// Bytes the largest blocked datagram waits for, if one does.
    blocked: Option<u64>,
}

impl Limit {
    fn new(rate: Option<u64>, now: Instant) -> Limit {
        // A quarter second at the rate, and never less than two of the
        // largest datagrams, or a large DATA could never pass.
        let burst = |rate: u64| (rate / 4).max(128 * 1024);
        Limit {
            bucket: rate.map(|r| TokenBucket::new(r, burst(r), now)),
            blocked: None,
        }
    }

    /// Whether what blocked (if anything) may go at `now`; clears the wait
    /// when it may.
    fn clear_if_ready(&mut self, now: Instant) -> bool {
        let ready = match (self.blocked, &self.bucket) {
            (Some(bytes), Some(b)) => b.ready_at(bytes) <= now,
            _ => true,
        };
        if ready {
            self.blocked = None;
        }
        ready
    }

    /// When what blocked may go, if anything waits.
    fn ready_at(&self, now: Instant) -> Option<Instant> {
        match (self.blocked, &self.bucket) {
            (Some(bytes), Some(b)) => Some(b.ready_at(bytes).max(now)),
            _ => None,
        }
    }
}

/// Both limits and the channels they hold back.
#[derive(Default)]
pub(crate) struct RateLimits {
    pub upload: Limit,
    pub download: Limit,
    waiters: Vec<ChannelId>,
}

impl RateLimits {
    pub fn new(config: &EndpointConfig, now: Instant) -> RateLimits {
        RateLimits {
            upload: Limit::new(config.upload_limit, now),
            download: Limit::new(config.download_limit, now),
            waiters: Vec::new(),
        }
    }

    /// Channel `id` was held back: its DATA waits for `up` bytes of upload,
    /// or its REQUEST for `down` bytes of download.
    pub fn hold(&mut self, id: ChannelId, up: Option<u64>, down: Option<u64>) {
        if up.is_some() || down.is_some() {
            self.waiters.push(id);
            self.upload.blocked = self.upload.blocked.max(up);
            self.download.blocked = self.download.blocked.max(down);
        }
    }

    /// The channels to wake at `now`: all that were held back, once either
    /// limit lets what it held go.
    pub fn ready(&mut self, now: Instant) -> Vec<ChannelId> {
        let up = self.upload.clear_if_ready(now);
        let down = self.download.clear_if_ready(now);
        if up || down {
            std::mem::take(&mut self.waiters)
        } else {
            Vec::new()
        }
    }

    /// When the earliest held-back datagram may go (never before `now`).
    pub fn next_deadline(&self, now: Instant) -> (Option<Instant>, Option<Instant>) {
        (self.download.ready_at(now), self.upload.ready_at(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_channels_wake_once_a_bucket_refills() {
        let config = EndpointConfig {
            upload_limit: Some(1_000_000),
            download_limit: Some(1_000_000),
            ..EndpointConfig::default()
        };
        let t0 = Instant::ZERO;
        let mut l = RateLimits::new(&config, t0);
        // Empty both buckets, then hold a channel for one more datagram
        // each way.
        for limit in [&mut l.upload, &mut l.download] {
            let b = limit.bucket.as_mut().unwrap();
            let all = b.available(t0);
            assert!(b.try_take(t0, all));
        }
        l.hold(ChannelId(7), Some(10_000), Some(20_000));
        assert!(l.ready(t0).is_empty(), "nothing came back yet");
        let (down, up) = l.next_deadline(t0);
        let (down, up) = (down.unwrap(), up.unwrap());
        assert!(up > t0 && up < down, "{up:?} {down:?}");
        // Either limit letting its datagram go wakes the channel: it may
        // send what that one held back.
        assert_eq!(l.ready(up), vec![ChannelId(7)]);
        assert_eq!(l.next_deadline(up), (Some(down), None));
        assert!(l.ready(down).is_empty(), "woken once");
        assert_eq!(l.next_deadline(down), (None, None));
    }

    #[test]
    fn a_channel_held_by_one_limit_wakes_at_once_while_the_other_holds_nothing() {
        // The endpoint's rule since rate limits came in: waiters wake when
        // either direction is free to go, and a direction that holds
        // nothing is free.
        let config = EndpointConfig {
            upload_limit: Some(1_000_000),
            ..EndpointConfig::default()
        };
        let mut l = RateLimits::new(&config, Instant::ZERO);
        l.hold(ChannelId(3), Some(1 << 30), None);
        assert_eq!(l.ready(Instant::ZERO), vec![ChannelId(3)]);
    }

    #[test]
    fn without_limits_nothing_waits() {
        let mut l = RateLimits::new(&EndpointConfig::default(), Instant::ZERO);
        l.hold(ChannelId(1), None, None);
        assert!(l.ready(Instant::ZERO).is_empty());
    }
}
