//! Scenario files (and the unit parsers under them, and sweep overrides):
//! any text gives a scenario or an error with a line, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = ppspp_lab::scenario::parse(text, "fuzz.toml") {
        // An error's line, when given, is inside the text.
        if let Some(line) = e.line {
            assert!(line >= 1 && line <= text.lines().count().max(1) + 1);
        }
    }
    for part in text.split_whitespace().take(4) {
        let _ = ppspp_lab::units::rate(part);
        let _ = ppspp_lab::units::bitrate(part);
        let _ = ppspp_lab::units::size(part);
        let _ = ppspp_lab::units::duration(part);
        if let Some((k, v)) = part.split_once('=') {
            let _ = ppspp_lab::sweep::apply(text, k, v);
        }
    }
});
