"""vLLM's connector base class, or, where vLLM is not installed, a local stand-in with the same names.

The stand-in is NOT vLLM: it holds only what :class:`~pegaflow_jvm_pd.connector.PdConnector` inherits (the
constructor's bookkeeping and the metadata binding), so that the connector imports, and can be driven by
``python/tests/pd_connector_driver.py``, on machines without vLLM (CI has no vLLM). Under vLLM these names are vLLM's
own classes and the stand-in is never defined. :data:`HAVE_VLLM` says which one was loaded.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Optional

try:
    from vllm.distributed.kv_transfer.kv_connector.v1.base import (  # type: ignore[import-not-found]
        KVConnectorBase_V1,
        KVConnectorMetadata,
        KVConnectorRole,
    )

    HAVE_VLLM = True
except ImportError:
    HAVE_VLLM = False

    class KVConnectorRole(enum.Enum):  # type: ignore[no-redef]
        """Stand-in for vLLM's enum of the same name (same members and values)."""

        SCHEDULER = 0
        WORKER = 1

    class KVConnectorMetadata:  # type: ignore[no-redef]
        """Stand-in for vLLM's marker base class of the scheduler-to-worker metadata."""

    class KVConnectorBase_V1:  # type: ignore[no-redef]  # noqa: N801 - vLLM's name
        """Stand-in for vLLM's ``KVConnectorBase_V1``: the constructor and the metadata binding the model runner uses
        (``bind_connector_metadata`` before a step, ``clear_connector_metadata`` after it). Every other hook is
        implemented by the connector itself."""

        def __init__(self, vllm_config: Any, role: "KVConnectorRole", kv_cache_config: Any = None):
            if getattr(vllm_config, "kv_transfer_config", None) is None:
                raise ValueError("kv_transfer_config must be set for KVConnectorBase_V1")
            self._connector_metadata: Optional[KVConnectorMetadata] = None
            self._vllm_config = vllm_config
            self._kv_transfer_config = vllm_config.kv_transfer_config
            self._kv_cache_config = kv_cache_config
            self._role = role

        @property
        def role(self) -> "KVConnectorRole":
            return self._role

        def bind_connector_metadata(self, connector_metadata: KVConnectorMetadata) -> None:
            self._connector_metadata = connector_metadata

        def clear_connector_metadata(self) -> None:
            self._connector_metadata = None

        def has_connector_metadata(self) -> bool:
            return self._connector_metadata is not None

        def _get_connector_metadata(self) -> KVConnectorMetadata:
            assert self._connector_metadata is not None
            return self._connector_metadata

try:  # vLLM whose model runner asks for get_transfer_results (failed receives named apart) instead of get_finished
    from vllm.distributed.kv_transfer.kv_connector.v1.base import (  # type: ignore[import-not-found]
        KVConnectorTransferResults,
    )
except ImportError:

    @dataclass
    class KVConnectorTransferResults:  # type: ignore[no-redef]
        """Stand-in for vLLM's class of the same name: one worker's transfer results of one step; a failed receive
        is in ``finished_recving`` too."""

        finished_sending: set = field(default_factory=set)
        finished_recving: set = field(default_factory=set)
        failed_recving: set = field(default_factory=set)


def tp_rank_and_size(vllm_config: Any) -> tuple:
    """This worker's tensor-parallel rank and the TP size: vLLM's process group where vLLM runs, else the config's
    ``parallel_config.rank`` (what a driver without vLLM sets per worker)."""
    size = int(getattr(vllm_config.parallel_config, "tensor_parallel_size", 1) or 1)
    if HAVE_VLLM:
        try:
            from vllm.distributed.parallel_state import get_tensor_model_parallel_rank  # type: ignore

            return int(get_tensor_model_parallel_rank()), size
        except (ImportError, AssertionError):
            pass
    return int(getattr(vllm_config.parallel_config, "rank", 0) or 0) % size, size
