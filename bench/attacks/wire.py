"""Just enough PPSPP (RFC 7574) to play a hostile peer: datagram and message
encoding, a tolerant decoder for what a node sends us, and the SHA-1 Merkle
tree with zero-hash padding (RFC 7574 §5; docs/ppspp-wire.md).

Only static content, SHA-1 and 1024-byte chunks, the node's defaults.
"""
import hashlib
import os
import struct
import time

HASH_LEN = 20
ZERO = bytes(HASH_LEN)

# Message types (RFC 7574 §8, Table 3).
HANDSHAKE, DATA, ACK, HAVE, INTEGRITY, PEX_RES4, PEX_REQ = 0, 1, 2, 3, 4, 5, 6
SIGNED_INTEGRITY, REQUEST, CANCEL, CHOKE, UNCHOKE, PEX_RES6, PEX_CERT = 7, 8, 9, 10, 11, 12, 13

# Chunk addressing methods (option 6, RFC 7574 §7.8).
BINS32, RANGES32 = 0, 2


def fresh_channel():
    """A random non-zero channel id (RFC 7574 §12.1)."""
    while True:
        c = int.from_bytes(os.urandom(4), "big")
        if c:
            return c


def options(addressing=RANGES32, swarm_id=None):
    """A HANDSHAKE option list (RFC 7574 §7): version 1, min version 1, the
    swarm id when given (mandatory for the initiator, §7.4), Merkle
    integrity, SHA-1, the addressing method, end. Options 8 and 9 are left
    out, as libswift does, so that any node accepts them."""
    out = bytes([0, 1, 1, 1])
    if swarm_id is not None:
        out += bytes([2]) + struct.pack(">H", len(swarm_id)) + swarm_id
    return out + bytes([3, 1, 4, 0, 6, addressing, 255])


def handshake(dst, src, opts):
    """A datagram opening (dst 0) or answering a handshake."""
    return struct.pack(">IBI", dst, HANDSHAKE, src) + opts


class Spec:
    """Chunk specifications in one addressing method: 32-bit chunk ranges
    (first, last) or 32-bit bins."""

    def __init__(self, addressing):
        self.addressing = addressing
        self.size = 8 if addressing == RANGES32 else 4

    def encode(self, first, last):
        if self.addressing == RANGES32:
            return struct.pack(">II", first, last)
        return struct.pack(">I", bin_of(first, last))

    def encode_bin(self, b):
        if self.addressing == BINS32:
            return struct.pack(">I", b)
        return struct.pack(">II", *bin_range(b))

    def decode(self, buf, at):
        """(first, last) of the spec at `at`."""
        if self.addressing == RANGES32:
            return struct.unpack_from(">II", buf, at)
        (b,) = struct.unpack_from(">I", buf, at)
        return bin_range(b)


def bin_range(b):
    """The chunks (first, last) of bin `b`: layer = trailing one bits
    (RFC 7574 §4.2: leaf i is bin 2i)."""
    layer = 0
    while (b >> layer) & 1:
        layer += 1
    first = (b >> (layer + 1)) << layer
    return first, first + (1 << layer) - 1


def bin_of(first, last):
    """The bin covering exactly first..last (an aligned power-of-two run)."""
    n = last - first + 1
    layer = n.bit_length() - 1
    return (2 * (first >> layer) + 1) * (1 << layer) - 1


def now_us():
    return time.time_ns() // 1000


def have(spec, first, last):
    return bytes([HAVE]) + spec.encode(first, last)


def integrity(spec, first, last, h):
    return bytes([INTEGRITY]) + spec.encode(first, last) + h


def data(spec, index, payload):
    """DATA of one chunk with a wall-clock µs timestamp (libswift reads it
    so, docs/ppspp-wire.md interop profile)."""
    return bytes([DATA]) + spec.encode(index, index) + struct.pack(">Q", now_us()) + payload


def pex_v4(ip, port):
    return bytes([PEX_RES4]) + bytes(int(x) for x in ip.split(".")) + struct.pack(">H", port)


def _skip_options(buf, at, spec):
    """Offset after an option list ending in 255, or None if malformed."""
    while at < len(buf):
        code = buf[at]
        at += 1
        if code == 255:
            return at
        if code in (0, 1, 3, 4, 5, 6):
            at += 1
        elif code == 2:
            if at + 2 > len(buf):
                return None
            at += 2 + struct.unpack_from(">H", buf, at)[0]
        elif code == 7:
            at += spec.size // 2 if spec.addressing == RANGES32 else spec.size
        elif code == 8:
            if at >= len(buf):
                return None
            at += 1 + buf[at]
        elif code == 9:
            at += 4
        else:
            return None
    return None


def parse(buf, spec):
    """(dst channel, [(type, fields)]) of a datagram; stops quietly at the
    first message it cannot read. Fields: HANDSHAKE (src,), REQUEST/HAVE/
    CANCEL (first, last), ACK (first, last), others ()."""
    if len(buf) < 4:
        return None, []
    (dst,) = struct.unpack_from(">I", buf, 0)
    at, out = 4, []
    fixed = {HAVE: spec.size, REQUEST: spec.size, CANCEL: spec.size, ACK: spec.size + 8,
             INTEGRITY: spec.size + HASH_LEN, PEX_RES4: 6, PEX_RES6: 18, PEX_REQ: 0,
             CHOKE: 0, UNCHOKE: 0}
    while at < len(buf):
        t = buf[at]
        at += 1
        if t == HANDSHAKE:
            if at + 4 > len(buf):
                break
            (src,) = struct.unpack_from(">I", buf, at)
            end = _skip_options(buf, at + 4, spec)
            if end is None:
                break
            out.append((t, (src,)))
            at = end
        elif t == DATA:
            out.append((t, spec.decode(buf, at)))
            break
        elif t in fixed:
            if at + fixed[t] > len(buf):
                break
            fields = spec.decode(buf, at) if t in (HAVE, REQUEST, CANCEL, ACK) else ()
            out.append((t, fields))
            at += fixed[t]
        else:
            break
    return dst, out


class Merkle:
    """The SHA-1 Merkle tree of `content` in `chunk`-byte chunks over the
    smallest complete tree of at least N leaves: missing leaves are zero
    hashes, and a parent of two zero hashes is zero too (RFC 7574 §5.1,
    docs/ppspp-wire.md)."""

    def __init__(self, content, chunk=1024):
        self.chunk = chunk
        self.n = max(1, -(-len(content) // chunk))
        self.height = (self.n - 1).bit_length()
        leaves = [hashlib.sha1(content[i * chunk:(i + 1) * chunk]).digest()
                  for i in range(self.n)]
        leaves += [ZERO] * ((1 << self.height) - self.n)
        self.layers = [leaves]
        while len(self.layers[-1]) > 1:
            below = self.layers[-1]
            self.layers.append([
                ZERO if below[i] == ZERO and below[i + 1] == ZERO
                else hashlib.sha1(below[i] + below[i + 1]).digest()
                for i in range(0, len(below), 2)])
        self.root = self.layers[-1][0]

    def node(self, layer, offset):
        """(first chunk, last chunk, hash) of a tree node."""
        return offset << layer, ((offset + 1) << layer) - 1, self.layers[layer][offset]

    def uncles(self, index, top=None):
        """Uncle hashes of chunk `index` up to layer `top` (default: the
        root), highest first, as RFC 7574 §5.3 orders them."""
        top = self.height if top is None else top
        return [self.node(layer, (index >> layer) ^ 1) for layer in reversed(range(top))]

    def peaks(self):
        """The true peaks of N chunks: one complete subtree per 1-bit of N,
        left to right (RFC 7574 §5.3)."""
        out, first = [], 0
        for layer in reversed(range(self.n.bit_length())):
            if self.n >> layer & 1:
                out.append(self.node(layer, first >> layer))
                first += 1 << layer
        return out
