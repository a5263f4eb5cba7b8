//! The lab's BitTorrent peer wire decoder (BEP 3 records): any bytes give a
//! message or an error, never a panic or an allocation beyond the input;
//! a message that decodes encodes back to a record that decodes the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ppspp_lab::bt::wire::Message;

fuzz_target!(|data: &[u8]| {
    let Ok(message) = Message::decode(data) else {
        return;
    };
    if let Message::Bitfield(bits) = &message {
        // The bitfield is a slice of the input, not a length taken on trust.
        assert!(bits.len() < data.len());
    }
    let (record, on_stream) = message.encode();
    assert!(on_stream >= record.len() as u64);
    assert_eq!(Message::decode(&record), Ok(message));
});
