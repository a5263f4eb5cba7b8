//! A bounds-checked big-endian reader over one datagram.
//!
//! Every read either returns a value taken from inside the datagram or a
//! `Truncated` error carrying the offset; nothing is allocated, so no length
//! field can make the decoder allocate or read past the datagram.

use super::error::{DecodeError, DecodeErrorKind};

#[derive(Clone, Debug)]
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    #[inline]
    pub(crate) fn new(buf: &'a [u8], pos: usize) -> Self {
        Cursor { buf, pos }
    }

    #[inline]
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    #[inline]
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    #[inline]
    pub(crate) fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError {
            offset: self.pos,
            kind,
        }
    }

    #[inline]
    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(self.error(DecodeErrorKind::Truncated));
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    #[inline]
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        let out = &self.buf[self.pos..];
        self.pos = self.buf.len();
        out
    }

    #[inline]
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }

    #[inline]
    pub(crate) fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }

    #[inline]
    pub(crate) fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    #[inline]
    pub(crate) fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    #[inline]
    pub(crate) fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    #[inline]
    pub(crate) fn u128(&mut self) -> Result<u128, DecodeError> {
        Ok(u128::from_be_bytes(self.array()?))
    }
}

/// The writing counterpart: appends to a caller-provided buffer.
#[derive(Debug)]
pub(crate) struct Writer<'b> {
    buf: &'b mut [u8],
    pos: usize,
    /// Bytes of `buf` that may be used (at most its length).
    cap: usize,
}

impl<'b> Writer<'b> {
    #[inline]
    pub(crate) fn new(buf: &'b mut [u8]) -> Self {
        let cap = buf.len();
        Writer { buf, pos: 0, cap }
    }

    /// Uses at most `cap` bytes of the buffer (never less than written).
    pub(crate) fn set_cap(&mut self, cap: usize) {
        self.cap = cap.clamp(self.pos, self.buf.len());
    }

    #[inline]
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    #[inline]
    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<(), super::EncodeError> {
        let end = self.pos + bytes.len();
        if end > self.cap {
            return Err(super::EncodeError::BufferTooSmall {
                needed: end,
                available: self.cap,
            });
        }
        self.buf[self.pos..end].copy_from_slice(bytes);
        self.pos = end;
        Ok(())
    }

    /// Fixed-size writes compile to single stores instead of a memcpy call.
    #[inline]
    fn put_array<const N: usize>(&mut self, bytes: [u8; N]) -> Result<(), super::EncodeError> {
        let end = self.pos + N;
        match self.buf[..self.cap].get_mut(self.pos..end) {
            Some(dst) => {
                dst.copy_from_slice(&bytes);
                self.pos = end;
                Ok(())
            }
            None => Err(super::EncodeError::BufferTooSmall {
                needed: end,
                available: self.cap,
            }),
        }
    }

    #[inline]
    pub(crate) fn u8(&mut self, v: u8) -> Result<(), super::EncodeError> {
        self.put_array([v])
    }

    #[inline]
    pub(crate) fn u16(&mut self, v: u16) -> Result<(), super::EncodeError> {
        self.put_array(v.to_be_bytes())
    }

    #[inline]
    pub(crate) fn u32(&mut self, v: u32) -> Result<(), super::EncodeError> {
        self.put_array(v.to_be_bytes())
    }

    #[inline]
    pub(crate) fn u64(&mut self, v: u64) -> Result<(), super::EncodeError> {
        self.put_array(v.to_be_bytes())
    }

    /// Forget everything written after `pos` (to undo a failed message).
    #[inline]
    pub(crate) fn truncate(&mut self, pos: usize) {
        self.pos = self.pos.min(pos);
    }

    /// The unwritten rest of the buffer.
    #[inline]
    pub(crate) fn remaining_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.pos..self.cap]
    }

    /// Counts `n` bytes written directly into [`Writer::remaining_mut`].
    #[inline]
    pub(crate) fn advance(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.cap);
    }
}
