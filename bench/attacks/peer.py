"""A hostile PPSPP peer on loopback: it answers the handshakes a node sends
it (RFC 7574 §3.1, as the responder) and hands every later datagram of the
channel to the attack, which decides what to send back."""
import socket
import threading

from . import wire


class HostilePeer:
    """Listens on 127.0.0.1; subclasses override `on_open` (called with the
    answer's datagram prefix so they can add messages to it) and
    `on_messages`."""

    addressing = wire.RANGES32

    def __init__(self, host="127.0.0.1"):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.bind((host, 0))
        self.sock.settimeout(0.2)
        self.addr = self.sock.getsockname()
        self.spec = wire.Spec(self.addressing)
        self.local = wire.fresh_channel()
        self.remote = None  # the node's channel id, once it opened one
        self.node = None  # the node's address
        self.opened = threading.Event()
        self.bytes_out = self.bytes_in = 0
        self.datagrams_out = 0
        self.running = True
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    @property
    def port(self):
        return self.addr[1]

    def send(self, payload, to=None):
        dgram = self.header() + payload if to is None else payload
        with self.lock:
            try:
                self.sock.sendto(dgram, to or self.node)
            except OSError:
                return False
            self.bytes_out += len(dgram)
            self.datagrams_out += 1
        return True

    def header(self):
        return self.remote.to_bytes(4, "big")

    def close(self):
        self.running = False
        self.thread.join(timeout=2)
        self.sock.close()

    def _loop(self):
        while self.running:
            try:
                buf, frm = self.sock.recvfrom(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            self.bytes_in += len(buf)
            dst, msgs = wire.parse(buf, self.spec)
            if dst == 0 and msgs and msgs[0][0] == wire.HANDSHAKE:
                src = msgs[0][1][0]
                if self.remote is None or (frm, src) == (self.node, self.remote):
                    self.node, self.remote = frm, src
                    answer = wire.handshake(src, self.local, wire.options(self.addressing))
                    self.send(answer + self.on_open(), to=frm)
                    self.opened.set()
                continue
            if dst == self.local and frm == self.node:
                self.on_messages(msgs)

    def on_open(self):
        """Messages to put after our HANDSHAKE answer."""
        return b""

    def on_messages(self, msgs):
        """The node's messages on our channel."""
