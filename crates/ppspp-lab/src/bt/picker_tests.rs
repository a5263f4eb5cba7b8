use super::*;
use rand::SeedableRng;

const KIB: u32 = 1024;

fn rng() -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(7)
}

fn nobody(_: &BlockRef) -> bool {
    false
}

#[test]
fn pieces_and_blocks_follow_the_sizes_and_the_last_is_short() {
    // 1 MiB + 20 KiB in 256 KiB pieces of 16 KiB blocks.
    let mut p = Picker::new(1024 * 1024 + 20 * 1024, 256 * KIB, 16 * KIB, false);
    assert_eq!(p.pieces(), 5);
    assert_eq!(p.piece_bytes(PieceIndex(4)), 20 * KIB);
    let all = vec![true; 5];
    let mut r = rng();
    let got = p.pick(&all, 1000, &nobody, &mut r);
    assert_eq!(got.len(), 4 * 16 + 2);
    let last: Vec<_> = got.iter().filter(|b| b.piece == PieceIndex(4)).collect();
    assert_eq!(last.len(), 2);
    assert!(last
        .iter()
        .any(|b| b.begin == 16 * KIB && b.length == 4 * KIB));
}

#[test]
fn a_started_piece_is_finished_before_another_is_begun() {
    let mut p = Picker::new(4 * 256 * 1024, 256 * KIB, 16 * KIB, false);
    let all = vec![true; 4];
    let mut r = rng();
    let first = p.pick(&all, 5, &nobody, &mut r);
    assert!(first.iter().all(|b| b.piece == first[0].piece));
    // The next asks (from any peer) take the rest of that piece first.
    let next = p.pick(&all, 11, &nobody, &mut r);
    assert!(next.iter().all(|b| b.piece == first[0].piece));
    assert_eq!(next.len(), 11);
    let more = p.pick(&all, 1, &nobody, &mut r);
    assert_ne!(more[0].piece, first[0].piece);
}

#[test]
fn after_the_random_first_pieces_the_rarest_comes_first() {
    let n = 20u32;
    let mut p = Picker::new(u64::from(n) * 16 * 1024, 16 * KIB, 16 * KIB, false);
    // Availability: piece i is held by i + 1 peers, piece 13 by one only.
    for i in 0..n {
        for _ in 0..=i {
            p.peer_has(PieceIndex(i));
        }
    }
    let all = vec![true; n as usize];
    let mut r = rng();
    // The first four pieces are random: hold four from the middle.
    for _ in 0..4 {
        let b = p.pick(&all, 1, &nobody, &mut r)[0];
        assert_eq!(p.on_block(&b), BlockOutcome::PieceDone(b.piece));
    }
    let held: Vec<u32> = (0..n).filter(|i| p.has(PieceIndex(*i))).collect();
    // Then the rarest of those left, one after the other.
    let mut order = Vec::new();
    for _ in 0..5 {
        let b = p.pick(&all, 1, &nobody, &mut r)[0];
        p.on_block(&b);
        order.push(b.piece.0);
    }
    let want: Vec<u32> = (0..n).filter(|i| !held.contains(i)).take(5).collect();
    assert_eq!(order, want, "held first: {held:?}");
}

#[test]
fn only_pieces_the_peer_has_are_asked_of_it() {
    let mut p = Picker::new(8 * 16 * 1024, 16 * KIB, 16 * KIB, false);
    let mut has = vec![false; 8];
    has[5] = true;
    let mut r = rng();
    let got = p.pick(&has, 10, &nobody, &mut r);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].piece, PieceIndex(5));
    assert!(!p.interesting(&[false; 8]));
    assert!(p.interesting(&has));
}

#[test]
fn the_end_game_asks_again_for_what_others_were_asked() {
    let mut p = Picker::new(2 * 16 * 1024, 16 * KIB, 16 * KIB, false);
    let all = vec![true; 2];
    let mut r = rng();
    let a = p.pick(&all, 10, &nobody, &mut r);
    assert_eq!(a.len(), 2);
    assert!(p.in_end_game());
    // Another peer: the same two blocks again, but never twice of one.
    let b = p.pick(&all, 10, &nobody, &mut r);
    assert_eq!(b.len(), 2);
    let asked_here = |x: &BlockRef| b.contains(x);
    assert!(p.pick(&all, 10, &asked_here, &mut r).len() <= 2);
    assert_eq!(p.on_block(&a[0]), BlockOutcome::PieceDone(a[0].piece));
    assert_eq!(p.on_block(&a[0]), BlockOutcome::Duplicate);
}

#[test]
fn an_unasked_block_is_asked_again() {
    let mut p = Picker::new(2 * 16 * 1024, 32 * KIB, 16 * KIB, false);
    let all = vec![true; 1];
    let mut r = rng();
    let a = p.pick(&all, 1, &nobody, &mut r);
    p.unask(&a[0]);
    let b = p.pick(&all, 1, &nobody, &mut r);
    assert_eq!(a, b);
}

#[test]
fn a_seed_has_everything_and_its_bitfield_says_so() {
    let p = Picker::new(10 * 16 * 1024, 16 * KIB, 16 * KIB, true);
    assert!(p.is_complete());
    assert_eq!(p.bitfield(), vec![0xff, 0xc0]);
    let q = Picker::new(10 * 16 * 1024, 16 * KIB, 16 * KIB, false);
    assert_eq!(q.bitfield(), vec![0, 0]);
}
