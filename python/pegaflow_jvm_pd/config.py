"""The connector's settings: ``kv_connector_extra_config`` of vLLM's ``--kv-transfer-config``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

_DEFAULTS = {
    "pega_address": "127.0.0.1:50055",
    "instance_id": "",
    "receive_timeout_s": 60.0,
    "push_timeout_s": 30.0,
    "rpc_timeout_s": 10.0,
    "prefill_http_timeout_s": 0.0,
    "liveness_s": 0.5,
    "dispatch_threads": 8,
    "allowed_prefill_urls": [],
}


@dataclass(frozen=True)
class PdConfig:
    """One instance's settings (every key optional; the defaults above).

    pega_address            host:port of this instance's pega-server gRPC endpoint (``pega.pd.enabled=true``)
    instance_id             the id the workers register their layers under; empty means vLLM's ``engine_id``
    receive_timeout_s       decode: PrepareReceive to every layer on the device (capped by ``pega.pd.receive-timeout``)
    push_timeout_s          prefill: StartPush to the last layer's acknowledgement (capped by ``pega.pd.push-timeout``)
    rpc_timeout_s           deadline of each call to the own server
    prefill_http_timeout_s  decode: deadline of the request it sends to the prefill instance; 0 means receive_timeout_s
    liveness_s              how often a worker with transfers in flight checks that its server can be reached
    dispatch_threads        decode scheduler: threads preparing receives and sending prefill requests
    allowed_prefill_urls    decode: the prefill instances (``http://host:port``) a request may name; a request naming
                            another one is computed locally. Empty allows any, so that any client of the decode
                            instance can make it post prompts to a URL of its choice: set it, or let only the proxy
                            reach the decode instance
    """

    pega_address: str
    instance_id: str
    receive_timeout_s: float
    push_timeout_s: float
    rpc_timeout_s: float
    prefill_http_timeout_s: float
    liveness_s: float
    dispatch_threads: int
    allowed_prefill_urls: tuple

    def allows(self, prefill_url: str) -> bool:
        return not self.allowed_prefill_urls or prefill_url in self.allowed_prefill_urls

    @staticmethod
    def from_extra(extra: Mapping[str, Any], engine_id: str = "") -> "PdConfig":
        unknown = sorted(set(extra) - set(_DEFAULTS))
        if unknown:
            raise ValueError(f"kv_connector_extra_config: unknown key(s) {unknown}; known: {sorted(_DEFAULTS)}")
        values = dict(_DEFAULTS)
        values.update(extra)
        for key in ("receive_timeout_s", "push_timeout_s", "rpc_timeout_s", "liveness_s"):
            values[key] = _positive(key, values[key])
        values["prefill_http_timeout_s"] = float(values["prefill_http_timeout_s"]) or values["receive_timeout_s"]
        values["dispatch_threads"] = int(_positive("dispatch_threads", values["dispatch_threads"]))
        urls = values["allowed_prefill_urls"]
        if isinstance(urls, str) or not all(isinstance(u, str) and u.startswith(("http://", "https://")) for u in urls):
            raise ValueError(f"kv_connector_extra_config.allowed_prefill_urls: expected a list of http(s) URLs, "
                             f"got {urls!r}")
        values["allowed_prefill_urls"] = tuple(u.rstrip("/") for u in urls)
        address = str(values["pega_address"])
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"kv_connector_extra_config.pega_address: expected host:port, got {address!r}")
        values["pega_address"] = address
        values["instance_id"] = str(values["instance_id"] or engine_id or "")
        if not values["instance_id"]:
            raise ValueError("kv_connector_extra_config.instance_id is empty and vLLM set no engine_id")
        return PdConfig(**values)

    @staticmethod
    def of(vllm_config: Any) -> "PdConfig":
        kv = vllm_config.kv_transfer_config
        return PdConfig.from_extra(dict(getattr(kv, "kv_connector_extra_config", None) or {}),
                                   str(getattr(kv, "engine_id", "") or ""))


def _positive(key: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"kv_connector_extra_config.{key}: expected a number, got {value!r}") from None
    if not v > 0:
        raise ValueError(f"kv_connector_extra_config.{key}: expected a positive number, got {value!r}")
    return v
