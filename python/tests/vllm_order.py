"""A vLLM engine reduced to the calls it makes on a KV connector, in vLLM's order (v1 scheduler, KVOutputAggregator,
KVConnectorModelRunnerMixin), for driving PdConnector without vLLM. Not vLLM: no model, no sampling, no prefix cache;
the "forward pass" writes known bytes into the KV cache per layer through a pluggable KV store.

One step, as vLLM's EngineCore.step does it:

  scheduler  WAITING_FOR_REMOTE_KVS requests whose receive finished: failed -> computed tokens as the load-error
             handler left them (recompute policy), else all blocks' tokens minus one
             new requests: get_num_new_matched_tokens(request, 0) -> (n, async); allocate; update_state_after_alloc
             async -> WAITING_FOR_REMOTE_KVS; else scheduled (num_computed_tokens set before build_connector_meta)
             build_connector_meta(scheduler_output); then computed tokens advance
  each worker bind_connector_metadata; [start_load_kv before the forward: old vLLM, or sync loads];
             per layer: KV written, save_kv_layer(name, kv, attn_metadata); [start_load_kv after the forward:
             current vLLM for async loads]; wait_for_save; get_transfer_results(finished_req_ids) (current vLLM;
             older: get_finished(finished_req_ids));
             get_block_ids_with_load_errors; clear_connector_metadata.  No tokens scheduled: the same without layers
             (kv_connector_no_forward).
  aggregator a request is finished sending/receiving once every rank said so; invalid block ids are the union
  scheduler  invalid blocks first (truncate computed tokens at the first invalid block), update_connector_output,
             finished_recving -> ready next step (or blocks freed if finished), finished_sending -> blocks freed,
             then outputs: a request whose prompt is computed gets a token; at max_tokens it finishes:
             request_finished(request, block_ids) -> delay freeing the blocks?
"""

from __future__ import annotations

import math
import random
import threading
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Callable, Dict, List, Optional, Set

WAITING, WAITING_FOR_REMOTE_KVS, RUNNING, FINISHED = "WAITING", "WAITING_FOR_REMOTE_KVS", "RUNNING", "FINISHED"


@dataclass
class Request:
    request_id: str
    prompt_token_ids: List[int]
    max_tokens: int
    kv_transfer_params: Optional[dict] = None
    status: str = WAITING
    num_computed_tokens: int = 0
    output_token_ids: List[int] = field(default_factory=list)
    blocks: List[int] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)
    # what the driver checks afterwards
    received: Optional[bool] = None  # None: never received; True: KV arrived; False: took the load-error path
    recomputed_from: Optional[int] = None  # first token computed locally after a failed receive
    invalid_blocks_reported: Set[int] = field(default_factory=set)

    @property
    def num_prompt_tokens(self) -> int:
        return len(self.prompt_token_ids)

    @property
    def num_tokens(self) -> int:
        return len(self.prompt_token_ids) + len(self.output_token_ids)


@dataclass
class KVCacheBlocks:
    ids: List[int]

    def get_block_ids(self):
        return (list(self.ids),)


def vllm_config(engine_id: str, tp_size: int, rank: int, block_size: int, extra: dict, role: str):
    return SimpleNamespace(
        kv_transfer_config=SimpleNamespace(engine_id=engine_id, kv_role=role, kv_connector="PdConnector",
                                           kv_connector_module_path="pegaflow_jvm_pd.connector",
                                           kv_connector_extra_config=dict(extra), kv_load_failure_policy="recompute"),
        cache_config=SimpleNamespace(block_size=block_size),
        parallel_config=SimpleNamespace(tensor_parallel_size=tp_size, rank=rank))


class Engine:
    """One vLLM instance: a scheduler-role connector and ``tp_size`` worker-role connectors over ``kv`` (the KV store:
    ``caches(rank)``, ``write(rank, layer, request, start, end)``, ``layers``)."""

    def __init__(self, name: str, connector_class, kv, tp_size: int, num_blocks: int, block_size: int, extra: dict,
                 start_load_after_forward: bool = True, seed: int = 0):
        self.name, self.kv, self.tp_size, self.block_size = name, kv, tp_size, block_size
        self.num_blocks = num_blocks
        self.start_load_after_forward = start_load_after_forward
        from pegaflow_jvm_pd._vllm import KVConnectorRole

        self.scheduler = connector_class(vllm_config(name, tp_size, 0, block_size, extra, "kv_both"),
                                         KVConnectorRole.SCHEDULER)
        self.workers = [connector_class(vllm_config(name, tp_size, r, block_size, extra, "kv_both"),
                                        KVConnectorRole.WORKER) for r in range(tp_size)]
        for r, w in enumerate(self.workers):
            w.register_kv_caches(kv.caches(r))
        self.free = list(range(num_blocks))
        random.Random(seed).shuffle(self.free)  # scattered block ids, as a used block pool hands them out
        self.requests: Dict[str, Request] = {}
        self.waiting: List[Request] = []
        self.running: List[Request] = []
        self.inbox: List[Request] = []
        self._inbox_lock = threading.Lock()
        self.finished_req_ids: Set[str] = set()
        self.finished_recving: Set[str] = set()
        self.failed_recving: Set[str] = set()
        self._pending_send: Dict[str, int] = {}
        self._pending_recv: Dict[str, int] = {}
        self._told_finished: List[Set[str]] = [set() for _ in range(tp_size)]
        self.layer_hook: Optional[Callable[[int], None]] = None  # called after each layer's KV is written
        self.on_received: Optional[Callable[[Request], None]] = None  # KV arrived, before any local token
        self.on_finished: Optional[Callable[[Request], None]] = None  # the last token, before request_finished

    def add(self, request: Request) -> None:
        with self._inbox_lock:
            self.inbox.append(request)

    def busy(self) -> bool:
        return bool(self.requests or self.inbox)

    # ---- scheduler

    def _allocate(self, request: Request, tokens: int) -> None:
        need = math.ceil(tokens / self.block_size) - len(request.blocks)
        if need > len(self.free):
            raise RuntimeError(f"{self.name}: out of KV blocks (the driver sizes its pool for its requests)")
        for _ in range(max(0, need)):
            request.blocks.append(self.free.pop())

    def _free_blocks(self, request: Request) -> None:
        self.free.extend(request.blocks)
        request.blocks = []
        del self.requests[request.request_id]

    def _ready_after_receive(self, request: Request) -> None:
        rid = request.request_id
        if rid in self.failed_recving:
            self.failed_recving.discard(rid)
            request.received = False
            if request.num_computed_tokens == 0:
                self.free.extend(request.blocks)
                request.blocks = []
        else:
            computed = min(len(request.blocks) * self.block_size, request.num_tokens)
            if computed == request.num_tokens:
                computed -= 1
            request.num_computed_tokens = computed
            request.received = True
            if self.on_received is not None:
                self.on_received(request)
        self.finished_recving.discard(rid)
        request.status = WAITING

    def schedule(self):
        with self._inbox_lock:
            for r in self.inbox:
                self.requests[r.request_id] = r
                self.waiting.append(r)
            self.inbox.clear()
        num_scheduled: Dict[str, int] = {}
        for r in self.running:
            num_scheduled[r.request_id] = 1
            self._allocate(r, r.num_computed_tokens + 1)
        still_waiting = []
        for r in self.waiting:
            if r.status == WAITING_FOR_REMOTE_KVS:
                if r.request_id not in self.finished_recving:
                    still_waiting.append(r)
                    continue
                self._ready_after_receive(r)
            ext, load_async = 0, False
            if r.num_computed_tokens == 0:
                ext, load_async = self.scheduler.get_num_new_matched_tokens(r, 0)
                assert ext == 0 or ext > 0 and isinstance(load_async, bool)
            computed = r.num_computed_tokens if r.num_computed_tokens else ext
            new = 0 if load_async else r.num_tokens - computed
            self._allocate(r, computed + new)
            self.scheduler.update_state_after_alloc(r, KVCacheBlocks(r.blocks), ext)
            if load_async:
                r.status = WAITING_FOR_REMOTE_KVS
                still_waiting.append(r)
                continue
            if r.received is False and r.recomputed_from is None:
                r.recomputed_from = computed
            r.status = RUNNING
            r.num_computed_tokens = computed
            self.running.append(r)
            num_scheduled[r.request_id] = new
        self.waiting = still_waiting
        out = SimpleNamespace(num_scheduled_tokens=num_scheduled,
                              total_num_scheduled_tokens=sum(num_scheduled.values()),
                              finished_req_ids=self.finished_req_ids, scheduled_new_reqs=[],
                              scheduled_cached_reqs=SimpleNamespace(req_ids=[], new_block_ids=[]),
                              preempted_req_ids=set())
        out.kv_connector_metadata = self.scheduler.build_connector_meta(out)
        self.finished_req_ids = set()
        starts = {rid: self.requests[rid].num_computed_tokens for rid in num_scheduled}
        for rid, n in num_scheduled.items():
            self.requests[rid].num_computed_tokens += n
        return out, starts

    # ---- workers

    def execute(self, out, starts):
        sending: Dict[str, int] = {}
        outputs = []
        for rank, w in enumerate(self.workers):
            w.bind_connector_metadata(out.kv_connector_metadata)
            forward = out.total_num_scheduled_tokens > 0
            if not (forward and self.start_load_after_forward):
                w.start_load_kv(None)
            if forward:
                for layer, (name, cache) in enumerate(self.kv.caches(rank).items()):
                    for rid, n in out.num_scheduled_tokens.items():
                        self.kv.write(rank, layer, self.requests[rid], starts[rid], starts[rid] + n)
                    if self.layer_hook is not None:
                        self.layer_hook(layer)
                    w.save_kv_layer(name, cache, None)
                if self.start_load_after_forward:
                    w.start_load_kv(None)
            w.wait_for_save()
            self._told_finished[rank] |= set(out.finished_req_ids)
            if self.start_load_after_forward:  # current vLLM: get_transfer_results, failed receives named
                res = w.get_transfer_results(set(out.finished_req_ids))
                done_sending, done_recving, failed = res.finished_sending, res.finished_recving, res.failed_recving
                assert failed <= done_recving, (failed, done_recving)
            else:  # older vLLM: get_finished
                done_sending, done_recving = w.get_finished(set(out.finished_req_ids))
                failed = None
            invalid = w.get_block_ids_with_load_errors()
            w.clear_connector_metadata()
            # vLLM's rule: a request reported as finished sending must be one this rank was told had finished
            assert not (done_sending or set()) - self._told_finished[rank], (done_sending, self._told_finished[rank])
            outputs.append((done_sending or set(), done_recving or set(), invalid, failed))
        return self._aggregate(outputs)

    def _aggregate(self, outputs):
        """KVOutputAggregator: finished once every rank reported it."""
        finished_sending, finished_recving, invalid = set(), set(), set()
        failed = None if outputs and outputs[0][3] is None else set()
        for done_sending, done_recving, inv, fail in outputs:
            invalid |= inv
            if failed is not None:
                failed |= fail
            for rid in done_sending:
                self._pending_send[rid] = self._pending_send.get(rid, 0) + 1
                if self._pending_send[rid] == self.tp_size:
                    del self._pending_send[rid]
                    finished_sending.add(rid)
            for rid in done_recving:
                self._pending_recv[rid] = self._pending_recv.get(rid, 0) + 1
                if self._pending_recv[rid] == self.tp_size:
                    del self._pending_recv[rid]
                    finished_recving.add(rid)
        return SimpleNamespace(finished_sending=finished_sending or None, finished_recving=finished_recving or None,
                               invalid_block_ids=invalid, failed_recving=failed)

    # ---- scheduler, after the step

    def update_from_output(self, out, kv_out) -> None:
        if kv_out.invalid_block_ids:
            for r in self.waiting:
                if r.status != WAITING_FOR_REMOTE_KVS:
                    continue
                computed = (r.num_computed_tokens if r.request_id in self.failed_recving
                            else len(r.blocks) * self.block_size)
                for idx, b in enumerate(r.blocks[:math.ceil(computed / self.block_size)]):
                    if b in kv_out.invalid_block_ids:
                        r.invalid_blocks_reported |= set(r.blocks[idx:]) & kv_out.invalid_block_ids
                        r.num_computed_tokens = idx * self.block_size
                        self.failed_recving.add(r.request_id)
                        break
        self.scheduler.update_connector_output(kv_out)
        for rid in kv_out.finished_recving or ():
            r = self.requests[rid]
            if kv_out.failed_recving is not None:
                # a receive is named failed exactly when its blocks were reported as load errors
                assert (rid in kv_out.failed_recving) == (rid in self.failed_recving), (rid, kv_out.failed_recving)
            if r.status == WAITING_FOR_REMOTE_KVS:
                self.finished_recving.add(rid)
            else:
                assert r.status == FINISHED
                self._free_blocks(r)
        for rid in kv_out.finished_sending or ():
            self._free_blocks(self.requests[rid])
        for rid in out.num_scheduled_tokens:
            r = self.requests[rid]
            if r.num_computed_tokens < r.num_tokens:
                continue  # a prefill chunk
            r.output_token_ids.append(1000 + len(r.output_token_ids))
            if len(r.output_token_ids) >= r.max_tokens:
                self.running.remove(r)
                r.status = FINISHED
                if self.on_finished is not None:
                    self.on_finished(r)
                delay, _ = self.scheduler.request_finished(r, (list(r.blocks),))
                self.finished_req_ids.add(rid)
                if not delay:
                    self._free_blocks(r)
                r.done.set()

    def step(self) -> bool:
        """One engine step; False when there was nothing to do."""
        if not self.busy() and not self.finished_req_ids:
            return False
        out, starts = self.schedule()
        kv_out = self.execute(out, starts)
        self.update_from_output(out, kv_out)
        return True

    def shutdown(self) -> None:
        for w in self.workers:
            w.shutdown()
        self.scheduler.shutdown()


def run_until(engines: List[Engine], done: Callable[[], bool], timeout_s: float) -> None:
    """Steps the engines in turn, as their busy loops would, until ``done()``; raises TimeoutError past the deadline
    (a hang is a failure, never a wait)."""
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not done after {timeout_s} s: " + "; ".join(
                f"{e.name}: {[(r.request_id, r.status) for r in e.requests.values()]}" for e in engines))
        worked = False
        for e in engines:
            worked |= e.step()
        if not worked:
            time.sleep(0.002)
