//! Hostile input: arbitrary bytes fed to the datagram decoder never panic,
//! never allocate, and whatever decodes re-encodes to the same bytes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use ppspp_core::wire::{decode_datagram, ChunkAddressing, DatagramWriter, Message, SwarmParams};
use ppspp_core::HashFunction;
use proptest::prelude::*;

/// Counts heap allocations made on the current thread while enabled.
struct CountingAlloc;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.with(|n| n.set(n.get() + 1));
        }
        // SAFETY: forwards the caller's layout to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Decode every message of `bytes`, counting allocations; returns the
/// messages before the first error, whether an error ended it, and the
/// number of allocations.
fn decode_counting(bytes: &[u8], params: SwarmParams) -> (Vec<Message<'_>>, bool, u64) {
    let mut out = Vec::with_capacity(bytes.len() + 1);
    ALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|c| c.set(true));
    let mut failed = false;
    if let Ok((_, messages)) = decode_datagram(bytes, params) {
        for m in messages {
            match m {
                Ok(m) => out.push(m),
                Err(_) => failed = true,
            }
        }
    } else {
        failed = true;
    }
    COUNTING.with(|c| c.set(false));
    (out, failed, ALLOCATIONS.with(Cell::get))
}

fn params() -> impl Strategy<Value = SwarmParams> {
    (
        prop::sample::select(ChunkAddressing::ALL.to_vec()),
        prop::sample::select(HashFunction::ALL.to_vec()),
        prop::option::of(0usize..200),
        prop::option::of(1u32..4096),
    )
        .prop_map(
            |(addressing, hash_function, signature_len, chunk_size)| SwarmParams {
                addressing,
                hash_function,
                signature_len,
                chunk_size,
            },
        )
}

/// Bytes biased toward valid message types, so decoding gets past the
/// first byte often.
fn hostile_bytes() -> impl Strategy<Value = Vec<u8>> {
    // Half the bytes are mapped onto the 14 message types (0..14), so the
    // decoder often gets past the first byte of a message.
    (prop::collection::vec(any::<u8>(), 0..600), any::<u64>()).prop_map(|(mut bytes, mask)| {
        for (i, b) in bytes.iter_mut().enumerate() {
            if mask >> (i % 64) & 1 == 1 {
                *b %= 14;
            }
        }
        bytes
    })
}

fn check(bytes: &[u8], params: SwarmParams) -> Result<(), TestCaseError> {
    let (messages, failed, allocations) = decode_counting(bytes, params);
    prop_assert_eq!(allocations, 0, "decoding allocated");
    // Every message takes at least its type byte.
    prop_assert!(messages.len() + 4 <= bytes.len().max(4));
    if bytes.len() < 4 {
        prop_assert!(failed);
        return Ok(());
    }
    // What decoded re-encodes to exactly the bytes it came from.
    let mut buf = vec![0u8; bytes.len()];
    let channel =
        ppspp_core::wire::ChannelId(u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]));
    let mut w = DatagramWriter::new(&mut buf, channel, params).unwrap();
    for m in &messages {
        w.push(m)
            .map_err(|e| TestCaseError::fail(format!("re-encoding {m:?}: {e}")))?;
    }
    let n = w.finish();
    prop_assert_eq!(&buf[..n], &bytes[..n]);
    if !failed {
        prop_assert_eq!(n, bytes.len());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5000))]

    #[test]
    fn random_bytes_never_panic_or_allocate(bytes in hostile_bytes(), params in params()) {
        check(&bytes, params)?;
    }

    #[test]
    fn mutated_capture_datagrams(
        line in 0usize..9,
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        cut in any::<prop::sample::Index>(),
        params in params(),
    ) {
        let capture = include_str!("vectors/libswift-exchange-3000B.txt");
        let hex_line = capture.lines().nth(line).unwrap().split_once(' ').unwrap().1;
        let mut bytes = hex::decode(hex_line.trim()).unwrap();
        for (at, v) in flips {
            let i = at.index(bytes.len());
            bytes[i] = v;
        }
        bytes.truncate(cut.index(bytes.len() + 1));
        check(&bytes, params)?;
    }
}

#[test]
fn huge_length_fields_stay_inside_the_datagram() {
    let p = SwarmParams::default();
    // A swarm id claiming 65535 bytes, a certificate claiming 65535 bytes.
    for bytes in [
        vec![0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 2, 0xFF, 0xFF, 1, 2, 3],
        vec![0, 0, 0, 1, 13, 0xFF, 0xFF, 1, 2, 3],
    ] {
        let (messages, failed, allocations) = decode_counting(&bytes, p);
        assert!(messages.is_empty() && failed);
        assert_eq!(allocations, 0);
    }
}
