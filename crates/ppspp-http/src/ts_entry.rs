//! Where a player can start decoding a live MPEG-TS stream joined in the
//! middle (ISO/IEC 13818-1): at a packet that begins a random access point
//! (adaptation field `random_access_indicator`, set by muxers such as
//! FFmpeg's on video keyframes), preceded by the stream's current PAT and
//! PMT so that the demuxer knows the programme before the keyframe comes.
//! Started anywhere else, a decoder sees frames that refer to a picture
//! and parameter sets it never got, and reports errors until the next
//! keyframe.

use crate::hls::TS_PACKET;

const P: usize = TS_PACKET as usize;
/// Stop looking for a keyframe after this many bytes and start anyway: a
/// stream that is not TS, or has no random access points marked.
const GIVE_UP: usize = 4 << 20;

/// Looks for the entry point in packet-aligned stream bytes fed to it.
#[derive(Debug, Default)]
pub struct EntryScan {
    pat: Option<Vec<u8>>,
    pmt_pid: Option<u16>,
    pmt: Option<Vec<u8>>,
    /// Bytes carried from the last feed: the start of an incomplete packet.
    carry: Vec<u8>,
    scanned: usize,
}

/// What to send first once the entry point is found.
#[derive(Debug, PartialEq, Eq)]
pub struct Entry {
    /// PAT and PMT packets (when seen), then the stream from the keyframe.
    pub bytes: Vec<u8>,
}

impl EntryScan {
    /// Feeds the next stream bytes (the first feed starts at a packet
    /// boundary). Returns the bytes to send from the entry point on, once
    /// found, or after [`GIVE_UP`] bytes without one.
    pub fn feed(&mut self, data: &[u8]) -> Option<Entry> {
        let mut buf = std::mem::take(&mut self.carry);
        buf.extend_from_slice(data);
        let whole = buf.len() / P * P;
        for at in (0..whole).step_by(P) {
            let packet = &buf[at..at + P];
            if packet[0] != 0x47 {
                continue;
            }
            let pid = u16::from_be_bytes([packet[1] & 0x1f, packet[2]]);
            if pid == 0 {
                self.pmt_pid = pmt_pid(packet).or(self.pmt_pid);
                self.pat = Some(packet.to_vec());
            } else if Some(pid) == self.pmt_pid {
                self.pmt = Some(packet.to_vec());
            } else if random_access(packet) && self.pmt.is_some() {
                let mut bytes = Vec::with_capacity(2 * P + buf.len() - at);
                bytes.extend(self.pat.iter().flatten());
                bytes.extend(self.pmt.iter().flatten());
                bytes.extend_from_slice(&buf[at..]);
                return Some(Entry { bytes });
            }
        }
        self.scanned += data.len();
        if self.scanned > GIVE_UP {
            return Some(Entry { bytes: buf });
        }
        self.carry = buf[whole..].to_vec();
        None
    }
}

/// Whether a packet starts a payload at a random access point.
fn random_access(packet: &[u8]) -> bool {
    let unit_start = packet[1] & 0x40 != 0;
    let adaptation = packet[3] & 0x20 != 0;
    unit_start && adaptation && packet[4] > 0 && packet[5] & 0x40 != 0
}

/// The PID of the first programme's PMT in a PAT packet.
fn pmt_pid(packet: &[u8]) -> Option<u16> {
    if packet[1] & 0x40 == 0 {
        return None;
    }
    let payload = match packet[3] & 0x30 {
        0x10 => 4,
        0x30 => 5 + usize::from(packet[4]),
        _ => return None,
    };
    let section = payload + 1 + usize::from(*packet.get(payload)?);
    let table = packet.get(section..)?;
    if *table.first()? != 0 {
        return None;
    }
    let len = usize::from(u16::from_be_bytes([*table.get(1)? & 0x0f, *table.get(2)?]));
    // Programme entries sit between the 8-byte header and the CRC.
    let entries = table.get(8..(3 + len).checked_sub(4)?)?;
    entries.chunks_exact(4).find_map(|e| {
        let program = u16::from_be_bytes([e[0], e[1]]);
        (program != 0).then(|| u16::from_be_bytes([e[2] & 0x1f, e[3]]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(pid: u16, unit_start: bool, rai: bool, fill: u8) -> Vec<u8> {
        let mut p = vec![fill; P];
        p[0] = 0x47;
        p[1] = (pid >> 8) as u8 & 0x1f | if unit_start { 0x40 } else { 0 };
        p[2] = pid as u8;
        if rai {
            p[3] = 0x30;
            p[4] = 1;
            p[5] = 0x40;
        } else {
            p[3] = 0x10;
        }
        p
    }

    fn pat(pmt: u16) -> Vec<u8> {
        let mut p = packet(0, true, false, 0xff);
        // Pointer 0; table 0, section length 13; ids; programme 1 → pmt.
        let table = [
            0u8,
            0x00,
            0xb0,
            13,
            0,
            1,
            0xc1,
            0,
            0,
            0,
            1,
            0xe0 | (pmt >> 8) as u8,
            pmt as u8,
            1,
            2,
            3,
            4,
        ];
        p[4..4 + table.len()].copy_from_slice(&table);
        p
    }

    #[test]
    fn the_entry_is_the_keyframe_after_the_tables() {
        assert_eq!(pmt_pid(&pat(0x1000)), Some(0x1000));
        let mut stream = Vec::new();
        stream.extend(packet(0x100, false, false, 1)); // mid-frame
        stream.extend(packet(0x100, true, true, 2)); // keyframe before the tables: no use
        stream.extend(pat(0x1000));
        stream.extend(packet(0x1000, true, false, 3)); // PMT
        stream.extend(packet(0x100, true, false, 4)); // a frame, not key
        stream.extend(packet(0x100, true, true, 5)); // the entry
        stream.extend(packet(0x100, false, false, 6));
        let mut scan = EntryScan::default();
        // Fed in uneven pieces, as chunks arrive.
        let mut found = None;
        for piece in stream.chunks(100) {
            if let Some(e) = scan.feed(piece) {
                found = Some(e);
                break;
            }
        }
        let e = found.expect("an entry");
        assert_eq!(&e.bytes[..P], &pat(0x1000)[..]);
        assert_eq!(e.bytes[P + 4], 3, "then the PMT");
        assert_eq!(e.bytes[2 * P + 6], 5, "then the keyframe");
        assert!(e.bytes.len() >= 3 * P && (e.bytes.len() - 2 * P) <= 2 * P);
    }

    #[test]
    fn a_pat_cut_short_anywhere_is_no_pat() {
        // The table starts at the packet's last byte (found by fuzzing).
        let mut p = packet(0, true, false, 0);
        p[4] = 182;
        assert_eq!(pmt_pid(&p), None);
        let full = pat(0x1000);
        for cut in 0..P {
            let mut q = full.clone();
            q[4] = cut as u8;
            let _ = pmt_pid(&q);
        }
    }

    #[test]
    fn a_stream_without_entries_starts_anyway_after_a_while() {
        let mut scan = EntryScan::default();
        let junk = vec![0u8; 64 * 1024];
        let mut fed = 0;
        while scan.feed(&junk).is_none() {
            fed += junk.len();
            assert!(fed <= GIVE_UP + junk.len());
        }
    }
}
