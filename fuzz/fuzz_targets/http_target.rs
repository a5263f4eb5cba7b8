//! Request paths as `ppspp stream` receives them from any client
//! (`ppspp_http::target`): never a panic, and what is read back is a piece
//! of the path that names one swarm segment and nothing else.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ppspp_http::target::{Resource, Target};

fuzz_target!(|data: &[u8]| {
    let Ok(path) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(t) = Target::parse(path) {
        // The swarm is the first segment; what follows it is nothing (or a
        // slash, or `.ts`) for the content, `/stats` for the status, and a
        // live stream's playlist or a numbered segment.
        let rest = path.trim_start_matches('/');
        assert!(rest.starts_with(t.swarm) && !t.swarm.contains('/'), "{path:?}");
        let after = &rest[t.swarm.len()..];
        match t.resource {
            Resource::Content => {
                assert!(matches!(after, "" | "/" | ".ts"), "{path:?}")
            }
            Resource::Stats => assert_eq!(after, "/stats", "{path:?}"),
            Resource::Playlist => assert_eq!(after, "/live.m3u8", "{path:?}"),
            Resource::Segment(n) => assert_eq!(after, format!("/seg/{n}.ts"), "{path:?}"),
        }
    }
});
