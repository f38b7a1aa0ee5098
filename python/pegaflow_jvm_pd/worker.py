"""Worker-side connector: one per vLLM worker (TP rank).

Prefill: each pushed request gets a layer-ready object and a push-state object when vLLM binds the step's metadata
(before the forward pass); StartPush goes out on a helper thread (the forward pass does not wait for it), and
``save_kv_layer`` marks the layer ready: on a GPU it records a CUDA event
and queues it, and a helper thread stores ``ready = L + 1`` once the event completed (a few microseconds on the
forward pass); on the host backend the bytes are in place already, so it stores at once. The request's blocks stay
allocated (the scheduler returned True from ``request_finished``) until its push state is written, or the push is
given up (deadline, or this worker's server cannot be reached), and only then is it reported as finished sending.

Decode: each receiving request's load_state object (created by the scheduler, one per rank) is polled in
``get_finished``; 1 finishes the request, -1, a deadline or an unreachable server finish it too and report its blocks
as load errors in the same pass, so vLLM's load-error path recomputes them.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set, Tuple

import grpc

from pegaflow_jvm_push import LayerReady, PushClient, StateObject

from .config import PdConfig
from .host_kv import HostKvLayer
from .metadata import PdMetadata

log = logging.getLogger("pegaflow_jvm_pd")

# A worker's own deadline comes after its server's (which writes -1 then): it only ends waits nobody will answer.
_GRACE_S = 5.0


@dataclass
class _Push:
    ready: LayerReady
    state: StateObject
    deadline: float
    started: float
    failed_locally: str = ""
    finished_by_scheduler: bool = False


@dataclass
class _Recv:
    state: Optional[StateObject]  # None: it could not be mapped, the receive has failed
    block_ids: Tuple[int, ...]
    deadline: float
    started: float


@dataclass
class _Step:
    """What one step's forward pass marks: the layer-ready objects of the pushes this step armed."""

    metadata: Any = None
    readies: List[LayerReady] = field(default_factory=list)


class _LayerMarker(threading.Thread):
    """Marks layers ready once their CUDA events completed, in order (the events of one stream complete in order)."""

    def __init__(self):
        super().__init__(name="pd-layer-ready", daemon=True)
        self.queue: "queue.SimpleQueue" = queue.SimpleQueue()

    def run(self) -> None:
        while True:
            item = self.queue.get()
            if item is None:
                return
            event, readies, count = item
            try:
                event.synchronize()
                for r in readies:
                    r.mark_ready(count)
            except (ValueError, RuntimeError) as e:  # a push given up and closed meanwhile: nothing to mark
                log.debug("layer %d not marked: %s", count, e)


class PdWorker:
    def __init__(self, config: PdConfig, tp_rank: int, tp_size: int):
        self.config = config
        self.tp_rank, self.tp_size = tp_rank, tp_size
        self.client = PushClient(config.pega_address, config.rpc_timeout_s)
        self._layer_index: Dict[str, int] = {}
        self._cuda = False
        self._pushes: Dict[str, _Push] = {}
        self._recvs: Dict[str, _Recv] = {}
        self._load_errors: Set[int] = set()
        self._failed_recving: Set[str] = set()  # the last get_finished's failed receives
        self._step = _Step()
        self._lock = threading.Lock()
        self._rpc = ThreadPoolExecutor(max_workers=2, thread_name_prefix="pd-start-push")
        self._marker: Optional[_LayerMarker] = None
        self._server_gone_at = 0.0  # monotonic time the server was last found unreachable
        self._stop = threading.Event()
        self._monitor = threading.Thread(target=self._watch_server, name="pd-server-watch", daemon=True)
        self._monitor.start()

    # ---- registration

    def register_kv_caches(self, kv_caches: Dict[str, Any]) -> None:
        layers, device = [], 0
        for name, cache in kv_caches.items():
            if isinstance(cache, HostKvLayer):
                layers.append(cache.describe(name))
            else:
                from .cuda_ipc import describe_tensor

                layers.append(describe_tensor(name, cache))
                device, self._cuda = cache.device.index or 0, True
            self._layer_index[name] = len(self._layer_index)
        try:
            registered = self.client.register_layers(self.config.instance_id, self.tp_rank, self.tp_size, device,
                                                     layers)
        except grpc.RpcError as e:
            raise RuntimeError(f"PdConnector rank {self.tp_rank}: pega-server {self.config.pega_address} refused the "
                               f"KV layers of instance {self.config.instance_id!r}: {e.code().name}: {e.details()} "
                               "(is it running with pega.pd.enabled=true?)") from None
        if registered != len(layers):
            raise RuntimeError(f"pega-server registered {registered} of {len(layers)} KV layers")
        if self._cuda:
            self._marker = _LayerMarker()
            self._marker.start()
        log.info("rank %d/%d registered %d KV layers with %s as %r", self.tp_rank, self.tp_size, len(layers),
                 self.config.pega_address, self.config.instance_id)

    # ---- per step

    def bind_step(self, metadata: PdMetadata) -> None:
        """Arms this step's receives and pushes, once per metadata object: when vLLM binds the metadata, before the
        forward pass (start_load_kv and save_kv_layer call it too, for a caller that binds otherwise)."""
        if self._step.metadata is metadata:
            return
        self._step = _Step(metadata)
        now = time.monotonic()
        for req_id, recv in metadata.recvs.items():
            if req_id in self._recvs:
                continue
            try:
                state: Optional[StateObject] = StateObject.attach(recv.load_state_shm[self.tp_rank])
            except (OSError, ValueError, IndexError) as e:
                log.warning("receive of %r: load_state of rank %d cannot be mapped: %s", req_id, self.tp_rank, e)
                state = None
            self._recvs[req_id] = _Recv(state, recv.block_ids, now + recv.timeout_s + self.config.rpc_timeout_s
                                        + _GRACE_S, now)
        for req_id, meta in metadata.pushes.items():
            if req_id in self._pushes:
                continue
            ready, state = LayerReady(len(self._layer_index)), StateObject()
            push = _Push(ready, state, now + meta.timeout_s + self.config.rpc_timeout_s + _GRACE_S, now)
            with self._lock:
                self._pushes[req_id] = push
            if meta.abort_reason:
                ready.abort()  # the server fails the receive at once: the decode side recomputes
                log.warning("push of %r aborted: %s", req_id, meta.abort_reason)
            else:
                self._step.readies.append(ready)
            self._rpc.submit(self._start_push, req_id, meta, push)

    def _start_push(self, req_id: str, meta, push: _Push) -> None:
        try:
            self.client.start_push(self.config.instance_id, self.tp_rank, req_id, meta.handshake,
                                   list(meta.block_ids), push.ready, push.state, timeout_s=meta.timeout_s)
        except grpc.RpcError as e:
            # the server may or may not hold the push (a deadline): stop it, and decide here
            push.ready.abort()
            push.failed_locally = f"StartPush: {e.code().name}: {e.details()}"
            log.warning("push of %r failed to start: %s", req_id, push.failed_locally)

    def save_kv_layer(self, layer_name: str, kv_layer: Any, metadata: Optional[PdMetadata]) -> None:
        if metadata is not None:
            self.bind_step(metadata)
        readies = self._step.readies
        if not readies:
            return
        index = self._layer_index.get(layer_name)
        if index is None:
            return
        if self._marker is not None:
            import torch

            event = torch.cuda.Event()
            event.record()
            self._marker.queue.put((event, list(readies), index + 1))
        else:
            for r in readies:
                r.mark_ready(index + 1)

    def end_step(self) -> None:
        self._step = _Step(self._step.metadata)

    # ---- completion

    def get_finished(self, finished_req_ids: Set[str]) -> Tuple[Optional[Set[str]], Optional[Set[str]]]:
        now = time.monotonic()
        gone_at = self._server_gone_at
        sending: Set[str] = set()
        with self._lock:
            for req_id in finished_req_ids:
                push = self._pushes.get(req_id)
                if push is not None:
                    push.finished_by_scheduler = True
            for req_id, push in list(self._pushes.items()):
                verdict = self._push_verdict(push, now, gone_at)
                if verdict is None or not push.finished_by_scheduler:
                    continue
                if verdict != "done":
                    push.ready.abort()
                    log.warning("push of %r ended without an acknowledgement: %s", req_id, verdict)
                push.ready.close()
                push.state.close()
                del self._pushes[req_id]
                sending.add(req_id)
        recving: Set[str] = set()
        self._failed_recving = set()
        for req_id, recv in list(self._recvs.items()):
            s = recv.state.state() if recv.state is not None else -1
            if s == 0 and now < recv.deadline and not recv.started < gone_at:
                continue
            if s != 1:
                reason = (f"load_state {s}" if s < 0 else "the deadline passed" if now >= recv.deadline
                          else f"pega-server {self.config.pega_address} cannot be reached")
                log.warning("receive of %r failed (%s): %d blocks will be recomputed", req_id, reason,
                            len(recv.block_ids))
                self._load_errors.update(recv.block_ids)
                self._failed_recving.add(req_id)
            if recv.state is not None:
                recv.state.close()
            del self._recvs[req_id]
            recving.add(req_id)
        return sending or None, recving or None

    @staticmethod
    def _push_verdict(push: _Push, now: float, gone_at: float) -> Optional[str]:
        s = push.state.state()
        if s == 1:
            return "done"
        if s < 0:
            return f"push state {s}"
        if push.failed_locally:
            return push.failed_locally
        if now >= push.deadline:
            return "the deadline passed"
        if push.started < gone_at:
            return "the server cannot be reached"
        return None

    def failed_recving(self) -> Set[str]:
        """The requests the last get_finished reported as finished receiving because their receive failed."""
        return set(self._failed_recving)

    def get_block_ids_with_load_errors(self) -> Set[int]:
        errors, self._load_errors = self._load_errors, set()
        return errors

    def _watch_server(self) -> None:
        while not self._stop.wait(self.config.liveness_s):
            if not (self._pushes or self._recvs):
                continue
            checked_at = time.monotonic()
            if not self.client.server_alive(1.0):
                self._server_gone_at = checked_at

    def shutdown(self) -> None:
        self._stop.set()
        self._rpc.shutdown(wait=True)
        if self._marker is not None:
            self._marker.queue.put(None)
        with self._lock:
            for push in self._pushes.values():
                push.ready.abort()
                push.ready.close()
                push.state.close()
            self._pushes.clear()
        for recv in self._recvs.values():
            if recv.state is not None:
                recv.state.close()
        self._recvs.clear()
        self.client.close()
