//! The resource a request path names: `/<swarm-id>` is the content,
//! `/<swarm-id>/stats` its live status; for a live stream also
//! `/<swarm-id>.ts` (the same endless stream), `/<swarm-id>/live.m3u8` (an
//! HLS playlist, RFC 8216) and `/<swarm-id>/seg/<n>.ts` (its segments).
//! The swarm id is not checked here: the gateway compares it with the one
//! swarm it serves.

/// What a path asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    /// The content, whole or a range of it.
    Content,
    /// The status document (JSON).
    Stats,
    /// A live stream's HLS playlist.
    Playlist,
    /// A live stream's HLS segment by its media sequence number.
    Segment(u64),
}

/// A request path split into the swarm it names and the resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target<'a> {
    /// The first path segment, as written (hex, any case).
    pub swarm: &'a str,
    /// What of the swarm is asked for.
    pub resource: Resource,
}

impl<'a> Target<'a> {
    /// Reads a request path (the URI's path, no query); `None` for a path
    /// that names nothing the gateway serves.
    pub fn parse(path: &'a str) -> Option<Target<'a>> {
        let path = path.trim_start_matches('/');
        let (swarm, rest) = path.split_once('/').unwrap_or((path, ""));
        // `/<id>.ts` (nothing after it) is the content too.
        let swarm = match path.contains('/') {
            false => swarm.strip_suffix(".ts").unwrap_or(swarm),
            true => swarm,
        };
        let resource = match rest {
            "" => Resource::Content,
            "stats" => Resource::Stats,
            "live.m3u8" => Resource::Playlist,
            _ => {
                let n = rest.strip_prefix("seg/")?.strip_suffix(".ts")?;
                // Digits only, no sign, no space, no leading zero (one
                // name per segment), at most u64.
                let canonical = n == "0" || !n.starts_with('0');
                if n.is_empty() || !canonical || !n.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                Resource::Segment(n.parse().ok()?)
            }
        };
        Some(Target { swarm, resource })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(swarm: &str, resource: Resource) -> Option<Target<'_>> {
        Some(Target { swarm, resource })
    }

    #[test]
    fn content_and_stats() {
        assert_eq!(Target::parse("/abc"), t("abc", Resource::Content));
        // A trailing slash still names the content, as before the split.
        assert_eq!(Target::parse("/abc/"), t("abc", Resource::Content));
        assert_eq!(Target::parse("/ABC/stats"), t("ABC", Resource::Stats));
        assert_eq!(Target::parse("//abc"), t("abc", Resource::Content));
    }

    #[test]
    fn live_resources() {
        assert_eq!(Target::parse("/abc.ts"), t("abc", Resource::Content));
        assert_eq!(
            Target::parse("/abc/live.m3u8"),
            t("abc", Resource::Playlist)
        );
        assert_eq!(
            Target::parse("/abc/seg/17.ts"),
            t("abc", Resource::Segment(17))
        );
        assert_eq!(Target::parse("/abc/seg/.ts"), None);
        assert_eq!(Target::parse("/abc/seg/+1.ts"), None);
        assert_eq!(Target::parse("/abc/seg/07.ts"), None);
        assert_eq!(
            Target::parse("/abc/seg/0.ts"),
            t("abc", Resource::Segment(0))
        );
        assert_eq!(Target::parse("/abc/seg/99999999999999999999.ts"), None);
        assert_eq!(Target::parse("/abc/seg/1"), None);
    }

    #[test]
    fn anything_else_is_nothing() {
        assert_eq!(Target::parse("/abc/other"), None);
        assert_eq!(Target::parse("/abc/stats/"), None);
        assert_eq!(Target::parse("/abc/stats/x"), None);
        // An empty swarm id is returned as such; it matches no swarm.
        assert_eq!(Target::parse("/"), t("", Resource::Content));
    }
}
