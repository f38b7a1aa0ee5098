"""``PdConnector``: vLLM's v1 KV connector for pega-server's P/D push (docs/pd-push.md, "Serving with vLLM").

Named in ``--kv-transfer-config`` by module path::

    {"kv_connector": "PdConnector", "kv_connector_module_path": "pegaflow_jvm_pd.connector",
     "kv_role": "kv_both", "kv_load_failure_policy": "recompute",
     "kv_connector_extra_config": {"pega_address": "127.0.0.1:50055"}}

One class in both roles, as vLLM creates it: the scheduler process gets a :class:`~.scheduler.PdScheduler`, each
worker a :class:`~.worker.PdWorker`. The signatures are vLLM's current ones; the constructor also works where vLLM does
not pass ``kv_cache_config`` (older versions). The connector does not declare vLLM's ``SupportsHMA``, so vLLM keeps
its hybrid KV cache manager off and hands it one KV cache group (the push has no per-group layout).
"""

from __future__ import annotations

import logging
from typing import Any, Dict, Optional, Set, Tuple

from ._vllm import HAVE_VLLM, KVConnectorBase_V1, KVConnectorRole, KVConnectorTransferResults, tp_rank_and_size
from .config import PdConfig
from .metadata import PdMetadata
from .scheduler import PdScheduler
from .worker import PdWorker

log = logging.getLogger("pegaflow_jvm_pd")


class PdConnector(KVConnectorBase_V1):
    def __init__(self, vllm_config: Any, role: Any, kv_cache_config: Any = None):
        try:
            super().__init__(vllm_config, role, kv_cache_config)
        except TypeError:  # vLLM before kv_cache_config was passed
            super().__init__(vllm_config, role)
        self.config = PdConfig.of(vllm_config)
        self._scheduler: Optional[PdScheduler] = None
        self._worker: Optional[PdWorker] = None
        tp_rank, tp_size = tp_rank_and_size(vllm_config)
        if role == KVConnectorRole.SCHEDULER:
            self._scheduler = PdScheduler(self.config, int(vllm_config.cache_config.block_size), tp_size)
        elif role == KVConnectorRole.WORKER:
            self._worker = PdWorker(self.config, tp_rank, tp_size)
        else:
            raise ValueError(f"unknown KV connector role {role!r}")
        if not HAVE_VLLM:
            log.info("vLLM is not installed: PdConnector runs on its local stand-in base class")

    # ---- class-level hooks

    @classmethod
    def get_required_kvcache_layout(cls, vllm_config: Any) -> Optional[str]:
        return None  # the push copies whole blocks; prefill and decode only need the same layout

    @classmethod
    def requires_piecewise_for_cudagraph(cls, extra_config: Dict[str, Any]) -> bool:
        return True  # save_kv_layer must run between the layers, which a full CUDA graph would skip

    # ---- worker side

    def register_kv_caches(self, kv_caches: Dict[str, Any]) -> None:
        if self._worker is not None:
            self._worker.register_kv_caches(kv_caches)

    def _metadata(self) -> Optional[PdMetadata]:
        meta = self._connector_metadata
        return meta if isinstance(meta, PdMetadata) else None

    def bind_connector_metadata(self, connector_metadata: Any) -> None:
        # the model runner binds before the forward pass: the step's shm objects and StartPush calls are made here,
        # so that save_kv_layer, inside the forward pass, only stores the ready count
        super().bind_connector_metadata(connector_metadata)
        meta = self._metadata()
        if self._worker is not None and meta is not None:
            self._worker.bind_step(meta)

    def start_load_kv(self, forward_context: Any, **kwargs: Any) -> None:
        meta = self._metadata()
        if self._worker is not None and meta is not None:
            self._worker.bind_step(meta)

    def wait_for_layer_load(self, layer_name: str) -> None:
        return  # decode blocks arrive between scheduler steps, before the request is scheduled

    def save_kv_layer(self, layer_name: str, kv_layer: Any, attn_metadata: Any, **kwargs: Any) -> None:
        if self._worker is not None:
            self._worker.save_kv_layer(layer_name, kv_layer, self._metadata())

    def wait_for_save(self) -> None:
        # the push goes on after the forward pass; vLLM keeps the blocks until get_finished reports the request
        if self._worker is not None:
            self._worker.end_step()

    def get_finished(self, finished_req_ids: Set[str]) -> Tuple[Optional[Set[str]], Optional[Set[str]]]:
        if self._worker is None:
            return None, None
        return self._worker.get_finished(finished_req_ids)

    def get_transfer_results(self, finished_req_ids: Optional[Set[str]] = None) -> Any:
        """What current vLLM asks for instead of get_finished: the same sets, and the failed receives by name (their
        blocks are in get_block_ids_with_load_errors in the same pass, for vLLM versions that only look there)."""
        sending, recving = self.get_finished(set(finished_req_ids or ()))
        failed = self._worker.failed_recving() if self._worker is not None else set()
        return KVConnectorTransferResults(finished_sending=sending or set(), finished_recving=recving or set(),
                                          failed_recving=failed)

    def get_block_ids_with_load_errors(self) -> Set[int]:
        return self._worker.get_block_ids_with_load_errors() if self._worker is not None else set()

    # ---- scheduler side

    def get_num_new_matched_tokens(self, request: Any, num_computed_tokens: int) -> Tuple[int, bool]:
        assert self._scheduler is not None
        return self._scheduler.get_num_new_matched_tokens(request, num_computed_tokens)

    def update_state_after_alloc(self, request: Any, blocks: Any, num_external_tokens: int) -> None:
        assert self._scheduler is not None
        self._scheduler.update_state_after_alloc(request, blocks, num_external_tokens)

    def build_connector_meta(self, scheduler_output: Any) -> PdMetadata:
        assert self._scheduler is not None
        return self._scheduler.build_connector_meta(scheduler_output)

    def update_connector_output(self, connector_output: Any) -> None:
        if self._scheduler is not None:
            self._scheduler.update_connector_output(connector_output)

    def request_finished(self, request: Any, block_ids: Any) -> Tuple[bool, Optional[Dict[str, Any]]]:
        assert self._scheduler is not None
        return self._scheduler.request_finished(request, block_ids)

    def has_pending_push_work(self) -> bool:
        return self._scheduler is not None and self._scheduler.has_pending_push_work()

    def shutdown(self) -> None:
        if self._worker is not None:
            self._worker.shutdown()
        if self._scheduler is not None:
            self._scheduler.shutdown()
