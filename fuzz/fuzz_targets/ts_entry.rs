//! Where a live viewer lets a player start (ppspp-http's `ts_entry`): the
//! stream's bytes come from its source, which may be hostile. Fed in
//! pieces of any size, the scan must not panic, and what it returns must
//! be no more than the tables it kept plus what it was fed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ppspp_http::hls::packet_start;
use ppspp_http::ts_entry::EntryScan;

fuzz_target!(|data: &[u8]| {
    let Some((&cut, rest)) = data.split_first() else {
        return;
    };
    let start = packet_start(u64::from(cut), rest);
    assert!(start <= rest.len());
    let mut scan = EntryScan::default();
    let piece = usize::from(cut).max(1);
    let mut fed = 0;
    for p in rest[start..].chunks(piece) {
        fed += p.len();
        if let Some(e) = scan.feed(p) {
            assert!(e.bytes.len() <= fed + 2 * 188);
            return;
        }
    }
});
