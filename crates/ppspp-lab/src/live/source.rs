//! The live source's camera: chunk `k` of the stream is made at
//! `start + (k + 1) · chunk duration` (it holds media `[k, k + 1)` chunk
//! durations from the start), and pushed into the injecting endpoint at
//! once. The core signs each munro as its last chunk comes and only then
//! announces it (RFC 7574 §6.1.2.3); the signature's timestamp is the lab's
//! virtual wall clock, so a run stays deterministic.

use ppspp_core::proto::{Endpoint, LivePushError, SwarmHandle};
use ppspp_core::time::Instant;

use super::{LiveStream, MediaClock};
use crate::content::fill_chunk;

/// A live source's production schedule.
#[derive(Clone, Debug)]
pub struct LiveSource {
    clock: MediaClock,
    /// Chunks in the stream, when it ends.
    end: Option<u64>,
    start: Instant,
    /// The next chunk to make.
    next: u64,
    /// Wall-clock µs at virtual time zero (the lab's epoch).
    epoch_us: u64,
    buf: Vec<u8>,
}

impl LiveSource {
    /// A source starting its stream at `start`, stamping signatures with
    /// `epoch_us` plus virtual time.
    pub fn new(stream: &LiveStream, start: Instant, epoch_us: u64) -> LiveSource {
        LiveSource {
            clock: stream.clock,
            end: stream.end,
            start,
            next: 0,
            epoch_us,
            buf: vec![0; stream.chunk_size.bytes_usize()],
        }
    }

    /// When the stream began.
    pub fn start(&self) -> Instant {
        self.start
    }

    /// Chunks made so far.
    pub fn made(&self) -> u64 {
        self.next
    }

    /// When the next chunk is made; `None` once the stream ended.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.end.is_some_and(|n| self.next >= n) {
            return None;
        }
        let us = self.clock.span_us(self.next + 1);
        Some(self.start + std::time::Duration::from_micros(us))
    }

    /// Makes every chunk due by `now` and pushes it into `ep`'s swarm.
    pub fn produce(
        &mut self,
        now: Instant,
        ep: &mut Endpoint,
        swarm: SwarmHandle,
    ) -> Result<u64, LivePushError> {
        let mut made = 0;
        while self.poll_timeout().is_some_and(|t| t <= now) {
            fill_chunk(self.next, &mut self.buf);
            ep.push_live_chunk(now, swarm, &self.buf, self.epoch_us + now.as_micros())?;
            self.next += 1;
            made += 1;
        }
        Ok(made)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::live::LiveSpec;
    use ppspp_core::pick;
    use ppspp_core::proto::{EndpointConfig, SwarmSetup};
    use ppspp_core::ChunkSize;

    #[test]
    fn chunks_come_at_the_bitrate_and_munros_are_announced_whole() {
        let text = "name = \"t\"\nduration = \"10s\"\n[content]\n[live]\nbitrate = \"1Mbit/s\"\n\
                    algorithm = \"ed25519\"\n[classes.c]\nup = \"1Mbit/s\"\ndown = \"1Mbit/s\"\n\
                    [[peers]]\nname = \"s\"\nclass = \"c\"\nrole = \"source\"\n";
        let scenario = crate::scenario::parse(text, "t.toml").unwrap();
        let spec: &LiveSpec = scenario.live.as_ref().unwrap();
        let stream = LiveStream::new(&scenario, spec, ChunkSize::DEFAULT, 1).unwrap();
        // 10 s of 8192 µs chunks, cut to whole munros of 32.
        assert_eq!(stream.end, Some(1216));
        let setup = SwarmSetup::live_source(
            ppspp_core::live::LiveInjector::new(
                stream.key().unwrap(),
                Default::default(),
                Some(stream.window_chunks),
            ),
            stream.shape(),
            stream.chunk_size,
            Box::new(stream.storage()),
            pick::by_name("sequential").unwrap(),
        );
        let mut ep = Endpoint::new(EndpointConfig::default(), 1);
        let h = ep.add_swarm(Instant::ZERO, setup).unwrap();
        let mut src = LiveSource::new(&stream, Instant::ZERO, 0);
        assert_eq!(src.poll_timeout(), Some(Instant::from_micros(8192)));
        // 31 chunks: no munro signed, nothing announced.
        src.produce(Instant::from_micros(31 * 8192), &mut ep, h)
            .unwrap();
        assert_eq!(src.made(), 31);
        assert_eq!(ep.progress(h).unwrap().0, 0);
        src.produce(Instant::from_micros(32 * 8192), &mut ep, h)
            .unwrap();
        assert_eq!(ep.progress(h).unwrap().0, 32);
        src.produce(Instant::from_micros(60_000_000), &mut ep, h)
            .unwrap();
        assert_eq!(src.made(), 1216);
        assert_eq!(src.poll_timeout(), None);
    }
}
