//! Fuzz the datagram decoder: two selector bytes pick the swarm parameters,
//! the rest is a datagram from the network.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let params = common::params_from(data[0], data[1]);
    common::decode_and_reencode(&data[2..], params);
});
