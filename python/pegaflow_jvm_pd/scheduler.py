"""Scheduler-side connector (one per vLLM engine).

Decode (the request carries ``pd_prefill_url``): ``get_num_new_matched_tokens`` answers "the rest of the prompt,
asynchronously"; ``update_state_after_alloc`` creates one load_state object per TP rank for the blocks vLLM allocated
and hands the request to the dispatcher (PrepareReceive, then the prefill request); the workers learn of it through
the metadata. A request that comes back after a failed receive (vLLM's load-error path set its computed tokens back)
is computed locally: it is never received twice.

Prefill (the request carries ``pd_push``): its blocks go to the workers in the step that computes the prompt; when
the request finishes, ``request_finished`` keeps its blocks allocated until every worker reported the push as ended.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Dict, Optional, Set, Tuple

from pegaflow_jvm_push import StateObject

from . import params as kvp
from .config import PdConfig
from .dispatch import PrefillDispatcher, Receive
from .metadata import PdMetadata, PushMeta, RecvMeta

log = logging.getLogger("pegaflow_jvm_pd")


def first_group(block_ids: Any) -> Tuple[int, ...]:
    """The (only) KV cache group's block ids, from a KVCacheBlocks, a tuple of groups or a flat list."""
    if hasattr(block_ids, "get_block_ids"):
        block_ids = block_ids.get_block_ids()
    block_ids = list(block_ids)
    if block_ids and isinstance(block_ids[0], (list, tuple)):
        if len(block_ids) != 1:
            raise ValueError(f"{len(block_ids)} KV cache groups: the push supports one (no hybrid models)")
        block_ids = block_ids[0]
    return tuple(int(b) for b in block_ids)


@dataclass
class _Producer:
    request: Any
    push: kvp.PushParams
    block_ids: Tuple[int, ...]


class PdScheduler:
    def __init__(self, config: PdConfig, block_size: int, tp_size: int,
                 dispatcher: Optional[PrefillDispatcher] = None):
        self.config = config
        self.block_size = block_size
        self.tp_size = tp_size
        self._dispatcher = dispatcher
        self._receives: Dict[str, Receive] = {}
        self._received_once: Set[str] = set()
        self._new_recvs: Dict[str, RecvMeta] = {}
        self._new_pushes: Dict[str, _Producer] = {}
        self._sending: Set[str] = set()

    def _dispatch(self) -> PrefillDispatcher:
        if self._dispatcher is None:  # made on first use: a prefill-only engine never opens it
            self._dispatcher = PrefillDispatcher(self.config)
        return self._dispatcher

    def get_num_new_matched_tokens(self, request: Any, num_computed_tokens: int) -> Tuple[int, bool]:
        decode = self._decode_params(request)
        if decode is None or request.request_id in self._received_once:
            return 0, False
        count = int(request.num_prompt_tokens) - num_computed_tokens
        if count <= 0 or num_computed_tokens % self.block_size:
            return 0, False
        return count, True

    def update_state_after_alloc(self, request: Any, blocks: Any, num_external_tokens: int) -> None:
        p = kvp.of_request(request)
        req_id = request.request_id
        try:
            push = kvp.push_params(p)
        except ValueError as e:
            log.warning("request %r not pushed: %s", req_id, e)
            push = None
        if push is not None:
            if req_id not in self._sending and req_id not in self._new_pushes:
                self._new_pushes[req_id] = _Producer(request, push, first_group(blocks))
            return
        decode = self._decode_params(request)
        if decode is None or num_external_tokens <= 0 or req_id in self._received_once:
            return
        self._received_once.add(req_id)
        prompt = int(request.num_prompt_tokens)
        skip = (prompt - num_external_tokens) // self.block_size
        total = -(-prompt // self.block_size)
        ids = first_group(blocks)[skip:total]
        states = [StateObject() for _ in range(self.tp_size)]
        receive = Receive(req_id, states, ids)
        self._receives[req_id] = receive
        self._new_recvs[req_id] = RecvMeta(tuple(s.name for s in states), ids, self.config.receive_timeout_s)
        if len(ids) != total - skip:
            log.warning("decode %r: %d blocks allocated for %d prompt blocks; recomputing", req_id, len(ids),
                        total - skip)
            for s in states:
                s.fail_unsent()
            return
        self._dispatch().submit(receive, decode, request.prompt_token_ids, skip)

    def _decode_params(self, request: Any) -> Optional[kvp.DecodeParams]:
        """The request's prefill instance, or None: no P/D, a malformed one, or one this instance may not call (each
        is computed locally)."""
        try:
            decode = kvp.decode_params(kvp.of_request(request))
        except ValueError as e:
            log.warning("request %r computed locally: %s", request.request_id, e)
            return None
        if decode is not None and not self.config.allows(decode.prefill_url):
            log.warning("request %r computed locally: prefill instance %r is not in allowed_prefill_urls",
                        request.request_id, decode.prefill_url)
            return None
        return decode

    def build_connector_meta(self, scheduler_output: Any) -> PdMetadata:
        pushes: Dict[str, PushMeta] = {}
        scheduled = getattr(scheduler_output, "num_scheduled_tokens", {}) or {}
        for req_id, prod in self._new_pushes.items():
            request, push = prod.request, prod.push
            ids = prod.block_ids[push.skip_blocks:push.skip_blocks + push.blocks]
            reason = ""
            covered = int(request.num_computed_tokens) + int(scheduled.get(req_id, 0))
            if covered < int(request.num_prompt_tokens):
                reason = (f"this step computes {covered} of {request.num_prompt_tokens} prompt tokens (chunked "
                          "prefill); the push needs the whole prompt in one step")
            elif len(ids) != push.blocks:
                reason = f"{len(ids)} prefill blocks for {push.blocks} decode blocks"
            pushes[req_id] = PushMeta(push.handshake, ids, self.config.push_timeout_s, reason)
            self._sending.add(req_id)
        meta = PdMetadata(recvs=self._new_recvs, pushes=pushes)
        self._new_recvs, self._new_pushes = {}, {}
        return meta

    def update_connector_output(self, connector_output: Any) -> None:
        for req_id in getattr(connector_output, "finished_recving", None) or ():
            receive = self._receives.pop(req_id, None)
            if receive is not None:
                receive.close()
        for req_id in getattr(connector_output, "finished_sending", None) or ():
            self._sending.discard(req_id)

    def request_finished(self, request: Any, block_ids: Any) -> Tuple[bool, Optional[Dict[str, Any]]]:
        req_id = request.request_id
        self._received_once.discard(req_id)
        self._new_pushes.pop(req_id, None)  # finished before its step was built: nothing was pushed
        receive = self._receives.get(req_id)
        if receive is not None and self._dispatcher is not None:
            self._dispatcher.cancel(receive)  # still receiving: vLLM frees the blocks once the workers report it
        return req_id in self._sending, None

    def has_pending_push_work(self) -> bool:
        return bool(self._sending)

    def shutdown(self) -> None:
        if self._dispatcher is not None:
            self._dispatcher.shutdown()
        for receive in self._receives.values():
            receive.close()
        self._receives.clear()
