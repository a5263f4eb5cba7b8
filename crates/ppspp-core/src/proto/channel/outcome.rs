//! What a channel leaves for its endpoint after an input or a datagram:
//! the outputs that used to travel back as flags on `Ctx`. The endpoint
//! reads them once the call returns (architecture note, "The sans-IO
//! boundary": inputs go in as arguments, outputs come back as values).

use std::net::SocketAddr;

use crate::chunk::ChunkRange;

/// The results of one `on_messages`, `on_timeout` or `poll_transmit` call.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// Requested chunks the channel gave up on: to be asked elsewhere
    /// (CHOKE voids them, RFC 7574 §3.9; a request timed out, §3.8; data
    /// failed verification).
    pub released: Vec<ChunkRange>,
    /// Requests past their deadline, to be asked of other peers as well
    /// (they stay outstanding here).
    pub late: Vec<ChunkRange>,
    /// Peer addresses learned through PEX (RFC 7574 §3.10).
    pub found: Vec<SocketAddr>,
    /// Malformed messages seen.
    pub malformed: u64,
    /// The swarm's chunk count became known (or changed).
    pub size_learned: bool,
    /// Bytes a DATA waited for from the upload limit.
    pub upload_blocked: Option<u64>,
    /// Bytes a REQUEST waited for from the download limit.
    pub download_blocked: Option<u64>,
    /// Who is choked may have to change (a peer became interested).
    pub rechoke: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_outcome_asks_nothing_of_the_endpoint() {
        let o = Outcome::default();
        assert!(o.released.is_empty() && o.late.is_empty() && o.found.is_empty());
        assert_eq!(o.malformed, 0);
        assert!(!o.size_learned && !o.rechoke);
        assert_eq!((o.upload_blocked, o.download_blocked), (None, None));
    }
}
