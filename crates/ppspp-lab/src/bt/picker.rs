//! Which blocks a BitTorrent peer asks for (BEP 3's "piece downloading
//! strategy", as mainline and libtorrent do it): strict priority for
//! pieces already started, a random piece until the first few are
//! complete, then rarest first among the peers connected (ties at
//! random), and the end game once every missing block is asked for.

use std::collections::BTreeMap;

use rand::rngs::Xoshiro256PlusPlus;
use rand::RngExt;

use super::wire::BlockRef;
use super::PieceIndex;

/// What arrived block means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockOutcome {
    /// Already had it (end game, or a late answer).
    Duplicate,
    /// Kept; its piece is not complete yet.
    Stored,
    /// It completed its piece.
    PieceDone(PieceIndex),
}

/// A started piece: which blocks are in and how many requests are out for
/// each.
#[derive(Clone, Debug)]
struct Partial {
    got: Vec<bool>,
    asked: Vec<u16>,
    missing: u32,
}

/// One peer's view of the content and of who has what.
#[derive(Clone, Debug)]
pub struct Picker {
    piece_len: u32,
    block_len: u32,
    total: u64,
    have: Vec<bool>,
    have_count: u32,
    /// How many connected peers have each piece.
    avail: Vec<u32>,
    partial: BTreeMap<u32, Partial>,
    /// Pieces picked at random before rarest first (libtorrent's
    /// `initial_picker_threshold` is 4; Cohen's paper says "the first").
    random_first: u32,
}

impl Picker {
    /// A picker for `total` bytes in pieces of `piece_len` and blocks of
    /// `block_len`, holding everything (a seed) or nothing.
    pub fn new(total: u64, piece_len: u32, block_len: u32, seed: bool) -> Picker {
        assert!(total > 0 && piece_len > 0 && block_len > 0 && piece_len.is_multiple_of(block_len));
        let n = total.div_ceil(u64::from(piece_len)) as usize;
        Picker {
            piece_len,
            block_len,
            total,
            have: vec![seed; n],
            have_count: if seed { n as u32 } else { 0 },
            avail: vec![0; n],
            partial: BTreeMap::new(),
            random_first: 4,
        }
    }

    /// Pieces in the content.
    pub fn pieces(&self) -> u32 {
        self.have.len() as u32
    }

    /// Pieces held.
    pub fn have_count(&self) -> u32 {
        self.have_count
    }

    /// Whether piece `p` is held.
    pub fn has(&self, p: PieceIndex) -> bool {
        self.have.get(p.0 as usize).copied().unwrap_or(false)
    }

    /// Whether every piece is held.
    pub fn is_complete(&self) -> bool {
        self.have_count == self.pieces()
    }

    /// The pieces held, as a bitfield message's bytes (high bit first).
    pub fn bitfield(&self) -> Vec<u8> {
        let mut b = vec![0u8; self.have.len().div_ceil(8)];
        for (i, h) in self.have.iter().enumerate() {
            if *h {
                b[i / 8] |= 0x80 >> (i % 8);
            }
        }
        b
    }

    /// Bytes in piece `p` (the last may be short).
    pub fn piece_bytes(&self, p: PieceIndex) -> u32 {
        let start = u64::from(p.0) * u64::from(self.piece_len);
        (self.total - start).min(u64::from(self.piece_len)) as u32
    }

    fn blocks_in(&self, p: u32) -> u32 {
        self.piece_bytes(PieceIndex(p)).div_ceil(self.block_len)
    }

    fn block(&self, p: u32, k: u32) -> BlockRef {
        let begin = k * self.block_len;
        BlockRef {
            piece: PieceIndex(p),
            begin,
            length: (self.piece_bytes(PieceIndex(p)) - begin).min(self.block_len),
        }
    }

    /// A connected peer has piece `p` (from its bitfield or a have).
    pub fn peer_has(&mut self, p: PieceIndex) {
        if let Some(a) = self.avail.get_mut(p.0 as usize) {
            *a += 1;
        }
    }

    /// A peer that had `pieces` went away.
    pub fn peer_gone(&mut self, pieces: &[bool]) {
        for (a, h) in self.avail.iter_mut().zip(pieces) {
            if *h {
                *a = a.saturating_sub(1);
            }
        }
    }

    /// Whether a peer holding `pieces` has something we lack.
    pub fn interesting(&self, pieces: &[bool]) -> bool {
        self.have.iter().zip(pieces).any(|(h, p)| *p && !*h)
    }

    /// Up to `want` blocks to ask a peer holding `pieces` for, marked as
    /// asked; `asked_here` says which blocks are already asked of this
    /// very peer (never twice, even in the end game).
    pub fn pick(
        &mut self,
        pieces: &[bool],
        want: usize,
        asked_here: &dyn Fn(&BlockRef) -> bool,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Vec<BlockRef> {
        let mut out = Vec::new();
        // Strict priority: blocks nobody is asked for in started pieces.
        let started: Vec<u32> = self.partial.keys().copied().collect();
        for p in started {
            if out.len() >= want {
                return out;
            }
            if pieces.get(p as usize) == Some(&true) {
                self.take_unasked(p, want, &mut out);
            }
        }
        // A new piece: at random at first, then the rarest.
        while out.len() < want {
            let Some(p) = self.new_piece(pieces, rng) else {
                break;
            };
            let blocks = self.blocks_in(p) as usize;
            self.partial.insert(
                p,
                Partial {
                    got: vec![false; blocks],
                    asked: vec![0; blocks],
                    missing: blocks as u32,
                },
            );
            self.take_unasked(p, want, &mut out);
        }
        if out.len() < want && self.in_end_game() {
            self.end_game(pieces, want, asked_here, &mut out);
        }
        out
    }

    /// Blocks of started piece `p` asked of nobody, into `out`.
    fn take_unasked(&mut self, p: u32, want: usize, out: &mut Vec<BlockRef>) {
        let n = self.blocks_in(p);
        for k in 0..n {
            if out.len() >= want {
                break;
            }
            let part = self.partial.get_mut(&p).expect("started");
            if !part.got[k as usize] && part.asked[k as usize] == 0 {
                part.asked[k as usize] = 1;
                out.push(self.block(p, k));
            }
        }
    }

    /// A piece not started and not held that the peer has: random while
    /// fewer than `random_first` are held, else one of the rarest.
    fn new_piece(&self, pieces: &[bool], rng: &mut Xoshiro256PlusPlus) -> Option<u32> {
        let candidates = (0..self.pieces()).filter(|&p| {
            !self.have[p as usize]
                && !self.partial.contains_key(&p)
                && pieces.get(p as usize) == Some(&true)
        });
        if self.have_count < self.random_first {
            let all: Vec<u32> = candidates.collect();
            return (!all.is_empty()).then(|| all[rng.random_range(0..all.len())]);
        }
        let mut rarest = Vec::new();
        let mut best = u32::MAX;
        for p in candidates {
            let a = self.avail[p as usize];
            if a < best {
                best = a;
                rarest.clear();
            }
            if a == best {
                rarest.push(p);
            }
        }
        (!rarest.is_empty()).then(|| rarest[rng.random_range(0..rarest.len())])
    }

    /// Whether every missing block is asked of someone: nothing new to
    /// start, nothing unasked in a started piece.
    pub fn in_end_game(&self) -> bool {
        let started_all =
            (0..self.pieces()).all(|p| self.have[p as usize] || self.partial.contains_key(&p));
        started_all
            && self
                .partial
                .values()
                .all(|part| part.got.iter().zip(&part.asked).all(|(g, a)| *g || *a > 0))
    }

    /// End game (Cohen §2.4.4, libtorrent): blocks still missing that
    /// the peer has and that are not asked of it, fewest requests first.
    fn end_game(
        &mut self,
        pieces: &[bool],
        want: usize,
        asked_here: &dyn Fn(&BlockRef) -> bool,
        out: &mut Vec<BlockRef>,
    ) {
        let mut cands = Vec::new();
        for (&p, part) in &self.partial {
            if pieces.get(p as usize) != Some(&true) {
                continue;
            }
            for (k, g) in part.got.iter().enumerate() {
                let b = self.block(p, k as u32);
                if !*g && !asked_here(&b) && !out.contains(&b) {
                    cands.push((part.asked[k], b));
                }
            }
        }
        cands.sort();
        for (_, b) in cands.into_iter().take(want - out.len()) {
            if let Some(part) = self.partial.get_mut(&b.piece.0) {
                part.asked[(b.begin / self.block_len) as usize] += 1;
            }
            out.push(b);
        }
    }

    /// A request for `b` is no longer out (choked, cancelled, the peer
    /// left): someone else may be asked.
    pub fn unask(&mut self, b: &BlockRef) {
        let k = (b.begin / self.block_len) as usize;
        if let Some(part) = self.partial.get_mut(&b.piece.0) {
            if let Some(a) = part.asked.get_mut(k) {
                *a = a.saturating_sub(1);
            }
        }
    }

    /// Block `b` arrived. (Every peer in the lab is honest, so a complete
    /// piece always passes its hash check.)
    pub fn on_block(&mut self, b: &BlockRef) -> BlockOutcome {
        let p = b.piece.0;
        let k = (b.begin / self.block_len) as usize;
        let Some(part) = self.partial.get_mut(&p) else {
            return BlockOutcome::Duplicate;
        };
        if part.got.get(k) != Some(&false) {
            return BlockOutcome::Duplicate;
        }
        part.got[k] = true;
        part.asked[k] = part.asked[k].saturating_sub(1);
        part.missing -= 1;
        if part.missing > 0 {
            return BlockOutcome::Stored;
        }
        self.partial.remove(&p);
        self.have[p as usize] = true;
        self.have_count += 1;
        BlockOutcome::PieceDone(PieceIndex(p))
    }
}

#[cfg(test)]
#[path = "picker_tests.rs"]
mod tests;
