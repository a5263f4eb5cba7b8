//! HTTP Range headers (RFC 7233) as `ppspp stream` receives them from any
//! client: never a panic, and whatever is answered lies inside the content.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ppspp_http::range::{self, Answer};

fuzz_target!(|data: &[u8]| {
    // The first 8 bytes pick the content length (never 0: swarms are not
    // empty); the rest is the header value.
    let Some((len, header)) = data.split_first_chunk::<8>() else {
        return;
    };
    let len = u64::from_le_bytes(*len).max(1);
    let specs = range::parse(header);
    let answer = range::answer(Some(header), len);
    match (&specs, answer) {
        (None, a) => assert_eq!(a, Answer::Full),
        (Some(specs), Answer::Partial { first, last }) => {
            assert_eq!(specs.len(), 1);
            assert!(first <= last && last < len, "{first}-{last}/{len}");
            assert_eq!(range::resolve(specs[0], len), Some((first, last)));
        }
        (Some(specs), Answer::Unsatisfiable) => {
            assert!(specs.iter().all(|s| range::resolve(*s, len).is_none()));
        }
        (Some(specs), Answer::Full) => assert!(specs.len() > 1),
    }
    if let Some(specs) = specs {
        assert!(!specs.is_empty() && specs.len() <= 64);
    }
});
