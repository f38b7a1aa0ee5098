"""The two ``kv_transfer_params`` this connector reads, as the OpenAI-compatible request bodies carry them.

proxy -> decode instance::

    {"pd_prefill_url": "http://prefill:8100", "pd_model": "Qwen/Qwen3-8B"}

decode instance (its scheduler-side connector) -> prefill instance, in a ``/v1/completions`` request with the prompt's
token ids and ``max_tokens`` 1::

    {"pd_push": {"handshake": "<base64 PushHandshake>", "skip_blocks": 2, "blocks": 7, "decode_request_id": "..."}}

``skip_blocks`` are leading blocks the decode instance already holds (its own prefix cache): the prefill side pushes
its blocks ``[skip_blocks, skip_blocks + blocks)`` to the decode blocks the handshake names, position by position.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any, Mapping, Optional

DECODE_KEY = "pd_prefill_url"
PUSH_KEY = "pd_push"


@dataclass(frozen=True)
class DecodeParams:
    prefill_url: str
    model: str


@dataclass(frozen=True)
class PushParams:
    handshake: bytes
    skip_blocks: int
    blocks: int
    decode_request_id: str

    def to_dict(self) -> dict:
        return {PUSH_KEY: {"handshake": base64.b64encode(self.handshake).decode("ascii"),
                           "skip_blocks": self.skip_blocks, "blocks": self.blocks,
                           "decode_request_id": self.decode_request_id}}


def of_request(request: Any) -> Mapping[str, Any]:
    return getattr(request, "kv_transfer_params", None) or {}


def decode_params(params: Mapping[str, Any]) -> Optional[DecodeParams]:
    url = params.get(DECODE_KEY)
    if not url:
        return None
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ValueError(f"kv_transfer_params.{DECODE_KEY}: expected an http(s) URL, got {url!r}")
    return DecodeParams(url.rstrip("/"), str(params.get("pd_model") or ""))


def push_params(params: Mapping[str, Any]) -> Optional[PushParams]:
    raw = params.get(PUSH_KEY)
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ValueError(f"kv_transfer_params.{PUSH_KEY}: expected an object")
    try:
        handshake = base64.b64decode(str(raw["handshake"]), validate=True)
        skip, blocks = int(raw.get("skip_blocks", 0)), int(raw["blocks"])
    except (KeyError, ValueError, TypeError, binascii.Error) as e:
        raise ValueError(f"kv_transfer_params.{PUSH_KEY}: {type(e).__name__}: {e}") from None
    if skip < 0 or blocks <= 0 or not handshake:
        raise ValueError(f"kv_transfer_params.{PUSH_KEY}: skip_blocks {skip}, blocks {blocks}, "
                         f"handshake of {len(handshake)} bytes")
    return PushParams(handshake, skip, blocks, str(raw.get("decode_request_id") or ""))
