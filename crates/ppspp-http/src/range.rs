//! HTTP `Range` request headers (RFC 7233), for the HTTP gateway that serves
//! a swarm's content to media players. The header comes from whoever
//! connects, so it is parsed as hostile input. Pure functions, no I/O.
//!
//! Only single byte ranges are answered with 206. A header with several
//! ranges is answered with the whole content (RFC 7233 §3.1: a server MAY
//! ignore the Range header), which players never mind: they ask for one
//! range at a time.

/// The most byte-range-specs read from one header; the rest of a longer
/// list is not looked at, so a hostile header costs bounded work.
const MAX_SPECS: usize = 64;

/// One byte-range-spec (RFC 7233 §2.1), not yet resolved against a length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeSpec {
    /// `first-last` or `first-` (`last` is `None`): positions are
    /// inclusive byte offsets.
    From {
        /// The first byte.
        first: u64,
        /// The last byte, inclusive; `None` to the end.
        last: Option<u64>,
    },
    /// `-n`: the last `n` bytes.
    Suffix(u64),
}

/// What to answer to a request, given the content length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// 200 with the whole content: no Range header, one we must ignore
    /// (other unit, bad syntax) or several ranges.
    Full,
    /// 206 with bytes `first..=last` (`last < len`).
    Partial {
        /// The first byte.
        first: u64,
        /// The last byte, inclusive.
        last: u64,
    },
    /// 416: no range overlaps the content (RFC 7233 §4.4).
    Unsatisfiable,
}

/// Parses a Range header value: `Some(specs)` for a well-formed
/// `bytes=` byte-range-set, `None` for anything the server must ignore
/// (RFC 7233 §3.1: an unknown range unit; §2.1: a set with a
/// syntactically invalid spec, e.g. `last < first`). At most
/// [`MAX_SPECS`] specs are returned.
pub fn parse(value: &[u8]) -> Option<Vec<RangeSpec>> {
    let text = std::str::from_utf8(value).ok()?.trim_matches([' ', '\t']);
    let (unit, set) = text.split_once('=')?;
    // Range units are case-insensitive (RFC 7233 §2).
    if !unit
        .trim_end_matches([' ', '\t'])
        .eq_ignore_ascii_case("bytes")
    {
        return None;
    }
    let mut specs = Vec::new();
    // `1#element` lists may hold empty elements, which recipients skip
    // (RFC 7230 §7).
    for item in set.split(',').map(|s| s.trim_matches([' ', '\t'])) {
        if item.is_empty() {
            continue;
        }
        if specs.len() == MAX_SPECS {
            break;
        }
        specs.push(spec(item)?);
    }
    (!specs.is_empty()).then_some(specs)
}

/// One byte-range-spec or suffix-byte-range-spec.
fn spec(item: &str) -> Option<RangeSpec> {
    let (first, last) = item.split_once('-')?;
    if first.is_empty() {
        return Some(RangeSpec::Suffix(number(last)?));
    }
    let first = number(first)?;
    let last = if last.is_empty() {
        None
    } else {
        Some(number(last)?)
    };
    // RFC 7233 §2.1: a last-byte-pos below the first-byte-pos makes the
    // spec invalid, and with it the whole header.
    if last.is_some_and(|l| l < first) {
        return None;
    }
    Some(RangeSpec::From { first, last })
}

/// `1*DIGIT`; values beyond `u64` saturate (any such offset is past every
/// content, which is what it means).
fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(s.bytes().fold(0u64, |n, b| {
        n.saturating_mul(10).saturating_add(u64::from(b - b'0'))
    }))
}

/// What to answer to a request with this Range header (`None`: there is
/// none) for content of `len` bytes (`len > 0`: swarms are never empty).
pub fn answer(header: Option<&[u8]>, len: u64) -> Answer {
    let Some(specs) = header.and_then(parse) else {
        return Answer::Full;
    };
    let resolved: Vec<Option<(u64, u64)>> = specs.iter().map(|s| resolve(*s, len)).collect();
    match resolved.as_slice() {
        [Some((first, last))] => Answer::Partial {
            first: *first,
            last: *last,
        },
        // RFC 7233 §4.4: 416 only when no range of the set is satisfiable.
        r if r.iter().all(Option::is_none) => Answer::Unsatisfiable,
        _ => Answer::Full,
    }
}

/// The inclusive byte span `spec` selects in content of `len` bytes, if it
/// overlaps it (RFC 7233 §2.1: a last position past the end is clamped; a
/// suffix longer than the content selects all of it; a zero suffix or a
/// first position at or past the end selects nothing).
pub fn resolve(spec: RangeSpec, len: u64) -> Option<(u64, u64)> {
    if len == 0 {
        return None;
    }
    match spec {
        RangeSpec::From { first, last } => {
            (first < len).then(|| (first, last.map_or(len - 1, |l| l.min(len - 1))))
        }
        RangeSpec::Suffix(0) => None,
        RangeSpec::Suffix(n) => Some((len - n.min(len), len - 1)),
    }
}

/// The `Content-Range` value of a 206 answer for bytes `first..=last` of
/// content of `len` bytes (RFC 7233 §4.2: inclusive positions, then the
/// complete length).
pub fn content_range(first: u64, last: u64, len: u64) -> String {
    format!("bytes {first}-{last}/{len}")
}

/// The `Content-Range` value of a 416 answer: the current length, so that
/// the client can ask again within it (RFC 7233 §4.4).
pub fn unsatisfied_range(len: u64) -> String {
    format!("bytes */{len}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ans(h: &str, len: u64) -> Answer {
        answer(Some(h.as_bytes()), len)
    }

    fn part(first: u64, last: u64) -> Answer {
        Answer::Partial { first, last }
    }

    #[test]
    fn single_ranges() {
        assert_eq!(ans("bytes=0-499", 1000), part(0, 499));
        assert_eq!(ans("bytes=500-999", 1000), part(500, 999));
        assert_eq!(ans("bytes=500-", 1000), part(500, 999));
        assert_eq!(ans("bytes=-200", 1000), part(800, 999));
        assert_eq!(ans("bytes=0-0", 1000), part(0, 0));
        // Clamped to the end; a suffix longer than the content is all of it.
        assert_eq!(ans("bytes=900-5000", 1000), part(900, 999));
        assert_eq!(ans("bytes=-5000", 1000), part(0, 999));
        assert_eq!(ans("bytes=0-18446744073709551615", 10), part(0, 9));
        assert_eq!(ans("bytes=0-99999999999999999999999", 10), part(0, 9));
    }

    #[test]
    fn whitespace_case_and_empty_elements() {
        assert_eq!(ans(" Bytes=10-20 ", 1000), part(10, 20));
        assert_eq!(ans("BYTES=,10-20, ", 1000), part(10, 20));
    }

    #[test]
    fn unsatisfiable() {
        assert_eq!(ans("bytes=1000-", 1000), Answer::Unsatisfiable);
        assert_eq!(ans("bytes=1000-2000", 1000), Answer::Unsatisfiable);
        assert_eq!(ans("bytes=-0", 1000), Answer::Unsatisfiable);
        assert_eq!(
            ans("bytes=99999999999999999999999-", 1000),
            Answer::Unsatisfiable
        );
        assert_eq!(ans("bytes=2000-,3000-3001", 1000), Answer::Unsatisfiable);
    }

    #[test]
    fn ignored_headers_get_the_whole_content() {
        for h in [
            "",
            "bytes",
            "bytes=",
            "bytes=,",
            "bytes=abc",
            "bytes=5-4",
            "bytes=1-2,5-4",
            "bytes=-",
            "bytes=--5",
            "bytes=+5-6",
            "bytes=5 -6",
            "bytes=1-2-3",
            "items=0-5",
            "bytes 0-5",
        ] {
            assert_eq!(ans(h, 1000), Answer::Full, "{h:?}");
        }
        assert_eq!(answer(None, 1000), Answer::Full);
        assert_eq!(answer(Some(&[0xff, 0xfe]), 1000), Answer::Full);
        // Several ranges: the whole content rather than multipart.
        assert_eq!(ans("bytes=0-1,5-6", 1000), Answer::Full);
        assert_eq!(ans("bytes=0-1,5000-6000", 1000), Answer::Full);
    }

    #[test]
    fn content_range_values() {
        assert_eq!(content_range(0, 499, 1000), "bytes 0-499/1000");
        assert_eq!(unsatisfied_range(1000), "bytes */1000");
    }

    #[test]
    fn long_lists_are_cut() {
        let h = format!("bytes={}", vec!["1-2"; 10_000].join(","));
        assert_eq!(parse(h.as_bytes()).map(|v| v.len()), Some(MAX_SPECS));
    }
}
