//! BitTorrent's choking algorithm (BEP 3; Cohen, "Incentives Build
//! Robustness in BitTorrent", §3; Legout et al. for mainline 4.x): every
//! round (10 s) a peer unchokes the `slots − 1` interested peers that
//! serve it fastest (tit-for-tat) or, once it is a seed, that it serves
//! fastest; one more slot is the optimistic unchoke, a random choked
//! interested peer, moved every third round (30 s).

use std::collections::BTreeSet;
use std::hash::Hash;

use rand::rngs::Xoshiro256PlusPlus;
use rand::RngExt;

/// A connection as the choker sees it in one round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate<K> {
    /// The connection.
    pub key: K,
    /// The peer is interested in what we have.
    pub interested: bool,
    /// Bytes it sent us (leecher) or we sent it (seed) lately.
    pub rate: u64,
}

/// The choker's state between rounds.
#[derive(Clone, Debug)]
pub struct Choker<K> {
    slots: usize,
    optimistic: Option<K>,
    round: u64,
    /// Rounds between moves of the optimistic unchoke.
    optimistic_every: u64,
}

impl<K: Copy + Ord + Hash> Choker<K> {
    /// A choker with `slots` unchoke slots (BEP 3 and mainline: 4), the
    /// optimistic one moved every `optimistic_every` rounds (3: 30 s).
    pub fn new(slots: usize, optimistic_every: u64) -> Choker<K> {
        assert!(slots >= 1 && optimistic_every >= 1);
        Choker {
            slots,
            optimistic: None,
            round: 0,
            optimistic_every,
        }
    }

    /// The optimistic unchoke of the current round.
    pub fn optimistic(&self) -> Option<K> {
        self.optimistic
    }

    /// One round: the connections to unchoke. Ties in rate go to the
    /// smaller key, so a round depends only on its inputs and `rng`.
    pub fn round(&mut self, cands: &[Candidate<K>], rng: &mut Xoshiro256PlusPlus) -> BTreeSet<K> {
        let mut interested: Vec<&Candidate<K>> = cands.iter().filter(|c| c.interested).collect();
        interested.sort_by(|a, b| b.rate.cmp(&a.rate).then(a.key.cmp(&b.key)));
        let regular: BTreeSet<K> = interested
            .iter()
            .take(self.slots - 1)
            .map(|c| c.key)
            .collect();
        let still_there = self
            .optimistic
            .is_some_and(|o| interested.iter().any(|c| c.key == o) && !regular.contains(&o));
        if self.round.is_multiple_of(self.optimistic_every) || !still_there {
            let choked: Vec<K> = interested
                .iter()
                .map(|c| c.key)
                .filter(|k| !regular.contains(k))
                .collect();
            self.optimistic =
                (!choked.is_empty()).then(|| choked[rng.random_range(0..choked.len())]);
        }
        self.round += 1;
        let mut out = regular;
        out.extend(self.optimistic);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn c(key: u32, interested: bool, rate: u64) -> Candidate<u32> {
        Candidate {
            key,
            interested,
            rate,
        }
    }

    #[test]
    fn the_fastest_three_interested_and_one_optimistic_are_unchoked() {
        let mut ch = Choker::new(4, 3);
        let mut r = Xoshiro256PlusPlus::seed_from_u64(1);
        let cands = [
            c(1, true, 10),
            c(2, true, 50),
            c(3, false, 99),
            c(4, true, 40),
            c(5, true, 30),
            c(6, true, 5),
            c(7, true, 0),
        ];
        let out = ch.round(&cands, &mut r);
        assert_eq!(out.len(), 4);
        for k in [2, 4, 5] {
            assert!(out.contains(&k), "{k} is among the fastest");
        }
        assert!(!out.contains(&3), "not interested: never unchoked");
        let o = ch.optimistic().unwrap();
        assert!([1, 6, 7].contains(&o));
        assert!(out.contains(&o));
    }

    #[test]
    fn the_optimistic_unchoke_stays_for_three_rounds_then_moves() {
        let mut ch = Choker::new(2, 3);
        let mut r = Xoshiro256PlusPlus::seed_from_u64(3);
        let cands: Vec<_> = (0..20)
            .map(|k| c(k, true, if k == 0 { 100 } else { 0 }))
            .collect();
        let first = {
            ch.round(&cands, &mut r);
            ch.optimistic().unwrap()
        };
        for _ in 0..2 {
            ch.round(&cands, &mut r);
            assert_eq!(ch.optimistic(), Some(first));
        }
        let mut moved = false;
        for _ in 0..5 {
            ch.round(&cands, &mut r);
            moved |= ch.optimistic() != Some(first);
            for _ in 0..2 {
                ch.round(&cands, &mut r);
            }
        }
        assert!(moved, "19 candidates: it moves within a few periods");
    }

    #[test]
    fn an_optimistic_peer_that_loses_interest_is_replaced_at_once() {
        let mut ch = Choker::new(2, 3);
        let mut r = Xoshiro256PlusPlus::seed_from_u64(5);
        let mut cands = vec![c(0, true, 100), c(1, true, 0), c(2, true, 0)];
        ch.round(&cands, &mut r);
        let o = ch.optimistic().unwrap();
        for x in cands.iter_mut() {
            if x.key == o {
                x.interested = false;
            }
        }
        let out = ch.round(&cands, &mut r);
        assert_ne!(ch.optimistic(), Some(o));
        assert!(!out.contains(&o));
        assert_eq!(out.len(), 2);
    }
}
