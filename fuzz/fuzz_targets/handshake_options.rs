//! Fuzz the handshake option parser: the input is the option list of a
//! HANDSHAKE in a channel's first datagram (and whatever follows it).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ppspp_core::wire::SwarmParams;

mod common;

fuzz_target!(|data: &[u8]| {
    // Destination channel 0, HANDSHAKE, source channel 0x01020304, options…
    let mut datagram = vec![0, 0, 0, 0, 0, 1, 2, 3, 4];
    datagram.extend_from_slice(data);
    common::decode_and_reencode(&datagram, SwarmParams::default());
});
