"""Framed messages over socket pairs between the worker processes and the parent.

A frame is a header (kind, edge id, payload length) and the payload: Arrow IPC stream
bytes for a batch, an int64 for a watermark or a credit count, pickled data for
control messages. Sockets stay blocking: every process has a reader (a thread in a
worker, the run loop in the parent) that drains all its incoming sockets into memory,
so a `sendall` always completes; credits (not socket buffers) bound what is in flight.
"""

from __future__ import annotations

import queue
import selectors
import socket
import struct
import threading
from typing import Any

import pyarrow as pa

# Message kinds.
BATCH = 1  # worker -> worker / parent: Arrow IPC batch for an edge (or the result)
WATERMARK = 2  # watermark on an edge
END = 3  # end of input on an edge
CREDIT = 4  # receiver -> sender: n batches of an edge were consumed
METRICS = 5  # worker -> parent: pickled metrics snapshot
DONE = 6  # worker -> parent: every node of the worker ended, all sent
ERROR = 7  # worker -> parent: pickled exception (or its text)
EXIT = 8  # parent -> worker: leave now
CLOSED = 9  # local only: the peer closed its socket
BARRIER = 10  # checkpoint barrier on an edge (pickled trigger: id, kind, storage, directory)
TRIGGER = 11  # parent -> worker: start checkpoint (same payload as BARRIER)
ACK = 12  # worker -> parent: pickled (checkpoint id, {node id: state entry}) once all stages snapshot
COMPLETE = 13  # parent -> worker: checkpoint `edge` is complete: commit (notify_checkpoint_complete)
COMMITTED = 14  # worker -> parent: the worker's operators were notified of checkpoint `edge`
ABORT = 15  # parent -> worker: stop-with-savepoint `edge` failed: the stages it froze run on

_HEADER = struct.Struct("!BiQ")
_INT = struct.Struct("!q")
PARENT = -1


def batch_to_bytes(batch: pa.RecordBatch) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue()


def batch_from_bytes(data: bytes) -> pa.RecordBatch:
    return pa.ipc.open_stream(pa.py_buffer(data)).read_next_batch()


def int_payload(value: int) -> bytes:
    return _INT.pack(value)


def int_of(payload: bytes) -> int:
    return int(_INT.unpack(payload)[0])


def send(sock: socket.socket, kind: int, edge: int, payload: Any = b"") -> None:
    """One frame; the payload is written without copying (bytes or an Arrow buffer)."""
    size = payload.size if isinstance(payload, pa.Buffer) else len(payload)
    sock.sendall(_HEADER.pack(kind, edge, size))
    if size:
        sock.sendall(memoryview(payload))


class FrameParser:
    """Accumulates received bytes of one socket and cuts them into frames."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def feed(self, data: bytes) -> list[tuple[int, int, bytes]]:
        self.buf += data
        frames = []
        while len(self.buf) >= _HEADER.size:
            kind, edge, size = _HEADER.unpack_from(self.buf)
            end = _HEADER.size + size
            if len(self.buf) < end:
                break
            frames.append((kind, edge, bytes(self.buf[_HEADER.size : end])))
            del self.buf[:end]
        return frames


class Reader(threading.Thread):
    """A worker's reader thread: drains every incoming socket (peers and the parent) into
    one queue of (peer, kind, edge, payload), so senders never block on this worker's
    main loop. A closed socket yields one CLOSED message."""

    def __init__(self, socks: dict[int, socket.socket]) -> None:
        super().__init__(name="streamsql-channel-reader", daemon=True)
        self.socks = socks
        self.queue: queue.Queue[tuple[int, int, int, bytes]] = queue.Queue()
        self._stop = threading.Event()

    def run(self) -> None:
        sel = selectors.DefaultSelector()
        parsers: dict[int, FrameParser] = {}
        for peer, s in self.socks.items():
            sel.register(s, selectors.EVENT_READ, peer)
            parsers[peer] = FrameParser()
        open_count = len(self.socks)
        try:
            while open_count and not self._stop.is_set():
                for key, _ in sel.select(timeout=0.2):
                    peer = key.data
                    try:
                        data = key.fileobj.recv(1 << 20)  # type: ignore[union-attr]
                    except OSError:
                        data = b""
                    if not data:
                        sel.unregister(key.fileobj)
                        open_count -= 1
                        self.queue.put((peer, CLOSED, 0, b""))
                        continue
                    for kind, edge, payload in parsers[peer].feed(data):
                        self.queue.put((peer, kind, edge, payload))
        finally:
            sel.close()

    def stop(self) -> None:
        self._stop.set()
