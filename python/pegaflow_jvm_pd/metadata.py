"""What the scheduler-side connector tells the worker-side ones each step (vLLM pickles it to every worker)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Tuple

from ._vllm import KVConnectorMetadata


@dataclass(frozen=True)
class RecvMeta:
    """Decode: a request whose blocks arrive by push. Rank r polls ``load_state_shm[r]`` (created by the scheduler);
    on -1, a deadline or its server gone, it reports ``block_ids`` as load errors."""

    load_state_shm: Tuple[str, ...]
    block_ids: Tuple[int, ...]
    timeout_s: float


@dataclass(frozen=True)
class PushMeta:
    """Prefill: push ``block_ids`` (this step computes all of them) to the handshake's decode blocks, position by
    position. A non-empty ``abort_reason`` means push nothing and fail the receive (the decode side recomputes)."""

    handshake: bytes
    block_ids: Tuple[int, ...]
    timeout_s: float
    abort_reason: str = ""


@dataclass
class PdMetadata(KVConnectorMetadata):
    recvs: Dict[str, RecvMeta] = field(default_factory=dict)
    pushes: Dict[str, PushMeta] = field(default_factory=dict)
