//! Positioned reads and writes: no shared file cursor, so reads for
//! serving and the parallel re-hash do not disturb each other.
//!
//! Unix has `pread`/`pwrite` ([`std::os::unix::fs::FileExt`]); elsewhere a
//! seek followed by a read or write on the handle stands in, which is only
//! correct while one thread uses the handle (the store's methods take
//! `&mut self`, and the re-hash opens a handle per worker).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

/// Reads at `offset` into `buf`; returns the bytes read (0 at the end).
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(file, buf, offset)
    }
    #[cfg(not(unix))]
    {
        seek_read(file, buf, offset)
    }
}

/// Writes some of `buf` at `offset`; returns the bytes written.
fn write_at(file: &File, buf: &[u8], offset: u64) -> io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_at(file, buf, offset)
    }
    #[cfg(not(unix))]
    {
        seek_write(file, buf, offset)
    }
}

/// The portable stand-in for [`read_at`].
#[cfg_attr(unix, allow(dead_code))]
fn seek_read(mut file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    file.seek(SeekFrom::Start(offset))?;
    file.read(buf)
}

/// The portable stand-in for [`write_at`].
#[cfg_attr(unix, allow(dead_code))]
fn seek_write(mut file: &File, buf: &[u8], offset: u64) -> io::Result<usize> {
    file.seek(SeekFrom::Start(offset))?;
    file.write(buf)
}

/// Fills as much of `buf` as the file holds from `offset`; returns how many
/// bytes were read (less than `buf.len()` only at the end of the file).
pub(crate) fn read_full_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    fill(buf, offset, |b, o| read_at(file, b, o))
}

/// Writes all of `buf` at `offset`.
pub(crate) fn write_all_at(file: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let at = offset + done as u64;
        match write_at(file, &buf[done..], at) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn fill(
    buf: &mut [u8],
    offset: u64,
    mut read: impl FnMut(&mut [u8], u64) -> io::Result<usize>,
) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match read(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positioned_and_portable_io_agree() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        write_all_at(&file, b"world", 6).unwrap();
        assert_eq!(seek_write(&file, b"hello ", 0).unwrap(), 6);
        let mut buf = [0u8; 16];
        assert_eq!(read_full_at(&file, &mut buf, 0).unwrap(), 11);
        assert_eq!(&buf[..11], b"hello world");
        let mut small = [0u8; 5];
        assert_eq!(seek_read(&file, &mut small, 6).unwrap(), 5);
        assert_eq!(&small, b"world");
        let got = fill(&mut buf, 3, |b, o| seek_read(&file, b, o)).unwrap();
        assert_eq!(&buf[..got], b"lo world");
        assert_eq!(read_full_at(&file, &mut buf, 100).unwrap(), 0);
    }
}
