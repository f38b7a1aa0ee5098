"""PdPush client: layer registration, PrepareReceive / StartPush, and the two shared-memory objects.

Layouts (docs/design/pd-push.md):

* layer-ready ("PFLR"), 32 bytes little-endian: u32 magic 0x524C4650, u32 version 1, u32 layers, u32 0,
  u64 ready (layers ready, monotonic) at 16, u64 abort at 24. The worker creates and writes it; the server reads.
* state objects (load_state / push_state, the reference's LoadState): u64 8 at 0, u32 "PFLD" 0x50464C44 at 8,
  u32 version 1 at 12, i64 state at 16 (0 pending, 1 done, < 0 failed). The server writes it once.
"""

from __future__ import annotations

import mmap
import os
import struct
import time
import uuid
from dataclasses import dataclass
from typing import List, Optional, Sequence

import grpc

from ._proto import pd_push_pb2 as pb
from ._proto import pd_push_pb2_grpc as pb_grpc

_SHM = "/dev/shm/"
READY_MAGIC = 0x524C4650
STATE_MAGIC = 0x50464C44


def _checked_name(name: str, prefix: str) -> str:
    if not name.startswith(prefix) or "/" in name or len(name) > 200:
        raise ValueError(f"not a {prefix}* shared-memory object name: {name!r}")
    return name


class PushTimeout(TimeoutError):
    """A wait passed its deadline: treat the request as failed (decode: recompute it)."""


class PushServerGone(ConnectionError):
    """The worker's own server stopped answering while the worker waited: nobody will write the verdict, so treat the
    request as failed now (decode: recompute it) instead of at the deadline."""


class _Shm:
    def __init__(self, prefix: str, size: int, attach: Optional[str] = None):
        """Creates a new object named ``prefix`` + a random suffix, or (``attach``) maps one another process of this
        user created, which this one then only unmaps: its creator unlinks it."""
        self._owner = attach is None
        self.name = f"{prefix}{uuid.uuid4().hex}" if attach is None else _checked_name(attach, prefix)
        self._path = _SHM + self.name
        flags = os.O_CREAT | os.O_EXCL | os.O_RDWR if self._owner else os.O_RDWR
        fd = os.open(self._path, flags, 0o600)
        try:
            if self._owner:
                os.ftruncate(fd, size)
            elif os.fstat(fd).st_size < size:
                raise ValueError(f"{self.name} holds {os.fstat(fd).st_size} bytes, expected {size}")
            self._map = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        self._closed = False

    def close(self) -> None:
        """Unmaps, and unlinks an object this one created; once."""
        if not self._closed:
            self._closed = True
            self._map.close()
            if self._owner:
                try:
                    os.unlink(self._path)
                except FileNotFoundError:
                    pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class LayerReady(_Shm):
    """The prefill worker's layer-ready object for one request and rank."""

    def __init__(self, layers: int):
        super().__init__("pega_ready_", 32)
        self.layers = layers
        struct.pack_into("<IIII", self._map, 0, READY_MAGIC, 1, layers, 0)

    def mark_ready(self, count: int) -> None:
        """Layers 0..count-1 are in device memory (on a GPU: call after the layer's CUDA event completed).

        An aligned 8-byte store; x86-64 keeps it ordered after the KV writes it follows."""
        struct.pack_into("<Q", self._map, 16, count)

    def abort(self) -> None:
        struct.pack_into("<Q", self._map, 24, 1)


class StateObject(_Shm):
    """A load_state (decode, one per rank) or push_state (prefill) object."""

    def __init__(self, attach: Optional[str] = None):
        super().__init__("pega_load_", 32, attach)
        if attach is None:
            struct.pack_into("<QII", self._map, 0, 8, STATE_MAGIC, 1)
        elif struct.unpack_from("<QII", self._map, 0) != (8, STATE_MAGIC, 1):
            raise ValueError(f"{self.name} is not a state object")

    @classmethod
    def attach(cls, name: str) -> "StateObject":
        """Maps a state object another process of this user created (a vLLM worker attaches the load_state its
        scheduler created); closing it only unmaps."""
        return cls(attach=name)

    def state(self) -> int:
        return struct.unpack_from("<q", self._map, 16)[0]

    def fail_unsent(self) -> None:
        """Writes -1 into an object no server was ever given (its PrepareReceive or StartPush failed), so that whoever
        waits on it takes the failure path at once. Never call it on an object a server may still write."""
        if self.state() == 0:
            struct.pack_into("<q", self._map, 16, -1)

    def wait(self, timeout_s: float, poll_s: float = 0.0002) -> int:
        """Waits for the verdict: 1 done, < 0 failed. Raises PushTimeout after timeout_s (never waits forever)."""
        deadline = time.monotonic() + timeout_s
        while True:
            s = self.state()
            if s != 0:
                return s
            if time.monotonic() >= deadline:
                raise PushTimeout(f"{self.name} still pending after {timeout_s} s")
            time.sleep(poll_s)


@dataclass(frozen=True)
class KvLayer:
    name: str
    wrapper_bytes: bytes
    num_blocks: int
    bytes_per_block: int
    kv_stride_bytes: int
    segments: int


def kv_layer(name, wrapper_bytes, num_blocks, bytes_per_block, kv_stride_bytes, segments) -> KvLayer:
    """A layer as RegisterContext describes it (same wrapper_bytes: a CUDA IPC handle, or host-shm JSON)."""
    return KvLayer(name, bytes(wrapper_bytes), num_blocks, bytes_per_block, kv_stride_bytes, segments)


class PushClient:
    """Calls one server's PdPush service; every call has ``rpc_timeout_s``."""

    def __init__(self, target: str, rpc_timeout_s: float = 10.0):
        self._target = target
        # Ping every 10 s (what pega-server permits), also between calls, and drop the connection when a ping goes
        # unanswered for 5 s: a wait then learns within about 15 s that the server's host vanished without closing
        # its sockets, not only when the server process died.
        self._channel = grpc.insecure_channel(target, options=[
            ("grpc.keepalive_time_ms", 10_000),
            ("grpc.keepalive_timeout_ms", 5_000),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.max_pings_without_data", 0),
        ])
        self._stub = pb_grpc.PdPushStub(self._channel)
        self._timeout = rpc_timeout_s
        self._connectivity = None
        self._channel.subscribe(self._on_connectivity, try_to_connect=False)

    def _on_connectivity(self, state) -> None:
        self._connectivity = state

    def close(self) -> None:
        self._channel.unsubscribe(self._on_connectivity)
        self._channel.close()

    def server_alive(self, connect_timeout_s: float = 1.0) -> bool:
        """Whether this client's server can be reached: a connected channel is; otherwise (a server that exits or is
        killed closes its sockets, and the channel leaves READY at once) it must connect within connect_timeout_s."""
        if self._connectivity == grpc.ChannelConnectivity.READY:
            return True
        try:
            grpc.channel_ready_future(self._channel).result(timeout=connect_timeout_s)
            return True
        except grpc.FutureTimeoutError:
            return False

    def wait(self, state: "StateObject", timeout_s: float, poll_s: float = 0.0002, liveness_s: float = 0.5) -> int:
        """StateObject.wait that also watches this client's server every liveness_s: returns 1 (done) or < 0
        (failed); raises PushTimeout at the deadline, or PushServerGone as soon as the server that would write the
        verdict cannot be reached (it died: nothing would ever write the object)."""
        deadline = time.monotonic() + timeout_s
        next_check = time.monotonic() + liveness_s
        while True:
            s = state.state()
            if s != 0:
                return s
            now = time.monotonic()
            if now >= deadline:
                raise PushTimeout(f"{state.name} still pending after {timeout_s} s")
            if now >= next_check:
                if not self.server_alive(min(1.0, max(0.05, deadline - now))):
                    s = state.state()  # the verdict may have been written just before the server went
                    if s != 0:
                        return s
                    raise PushServerGone(f"server {self._target} cannot be reached; {state.name} will never be "
                                         "written")
                next_check = time.monotonic() + liveness_s
            time.sleep(poll_s)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def register_layers(self, instance_id: str, tp_rank: int, tp_size: int, device_id: int,
                        layers: Sequence[KvLayer]) -> int:
        r = self._stub.RegisterPushLayers(pb.RegisterPushLayersRequest(
            instance_id=instance_id, tp_rank=tp_rank, tp_size=tp_size, device_id=device_id,
            layers=[pb.PushLayer(name=l.name, wrapper_bytes=l.wrapper_bytes, num_blocks=l.num_blocks,
                                 bytes_per_block=l.bytes_per_block, kv_stride_bytes=l.kv_stride_bytes,
                                 segments=l.segments) for l in layers]), timeout=self._timeout)
        return r.layers

    def prepare_receive(self, instance_id: str, request_id: str, block_ids: Sequence[int],
                        load_states: Sequence[StateObject], timeout_s: float = 0) -> pb.PrepareReceiveResponse:
        """Decode: returns the response; its ``handshake`` bytes go to prefill in kv_transfer_params."""
        return self._stub.PrepareReceive(pb.PrepareReceiveRequest(
            instance_id=instance_id, request_id=request_id, block_ids=list(block_ids),
            load_state_shm=[s.name for s in load_states], timeout_ms=int(timeout_s * 1000)),
            timeout=self._timeout)

    def cancel_receive(self, receive_id: int) -> None:
        self._stub.CancelReceive(pb.CancelReceiveRequest(receive_id=receive_id), timeout=self._timeout)

    def start_push(self, instance_id: str, tp_rank: int, request_id: str, handshake: bytes,
                   block_ids: Sequence[int], ready: LayerReady, push_state: StateObject,
                   timeout_s: float = 0) -> int:
        """Prefill: push this rank's blocks (position i goes to decode position i); returns the push id."""
        return self._stub.StartPush(pb.StartPushRequest(
            instance_id=instance_id, tp_rank=tp_rank, request_id=request_id, handshake=handshake,
            block_ids=list(block_ids), layer_ready_shm=ready.name, push_state_shm=push_state.name,
            timeout_ms=int(timeout_s * 1000)), timeout=self._timeout).push_id
