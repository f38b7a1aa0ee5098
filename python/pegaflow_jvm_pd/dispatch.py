"""Decode scheduler's helper threads: prepare a receive, then send the prompt to the prefill instance.

The handshake names the decode blocks, which exist only once vLLM's scheduler allocated them, so the decode instance
itself sends the prefill request (the proxy only chose which prefill instance): ``/v1/completions`` with the prompt's
token ids, ``max_tokens`` 1 and the handshake in ``kv_transfer_params``. Every failure here ends in -1 in the load_state
objects, which the workers turn into load errors: PrepareReceive refused (written here, no server holds the
objects), or the prefill instance unreachable or answering an error (CancelReceive: the server writes it).
"""

from __future__ import annotations

import json
import logging
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

import grpc

from pegaflow_jvm_push import PushClient, StateObject

from .config import PdConfig
from .params import DecodeParams, PushParams

log = logging.getLogger("pegaflow_jvm_pd")


@dataclass
class Receive:
    """One decode request's receive, owned by the scheduler-side connector."""

    request_id: str
    states: List[StateObject]
    block_ids: Sequence[int]
    lock: threading.Lock = field(default_factory=threading.Lock)
    receive_id: int = 0
    cancelled: bool = False

    def close(self) -> None:
        for s in self.states:
            s.close()


class PrefillDispatcher:
    def __init__(self, config: PdConfig, client: Optional[PushClient] = None):
        self.config = config
        self.client = client or PushClient(config.pega_address, config.rpc_timeout_s)
        self._pool = ThreadPoolExecutor(max_workers=config.dispatch_threads, thread_name_prefix="pd-dispatch")

    def submit(self, receive: Receive, decode: DecodeParams, prompt_token_ids: Sequence[int], skip_blocks: int) -> None:
        self._pool.submit(self._run, receive, decode, list(prompt_token_ids), skip_blocks)

    def cancel(self, receive: Receive) -> None:
        """The decode request ended before its KV arrived (vLLM aborted it): end the receive now."""
        with receive.lock:
            receive.cancelled = True
            receive_id = receive.receive_id
        if receive_id:
            self._pool.submit(self._cancel, receive, "the decode request was aborted")

    def _run(self, receive: Receive, decode: DecodeParams, prompt: List[int], skip_blocks: int) -> None:
        try:
            prepared = self.client.prepare_receive(self.config.instance_id, receive.request_id, receive.block_ids,
                                                   receive.states, timeout_s=self.config.receive_timeout_s)
        except grpc.RpcError as e:
            log.warning("PrepareReceive for %r refused: %s: %s", receive.request_id, e.code().name, e.details())
            for s in receive.states:
                s.fail_unsent()
            return
        with receive.lock:
            receive.receive_id = prepared.receive_id
            cancelled = receive.cancelled
        if cancelled:
            self._cancel(receive, "the decode request was aborted")
            return
        params = PushParams(prepared.handshake, skip_blocks, len(receive.block_ids), receive.request_id)
        body = {"prompt": prompt, "max_tokens": 1, "stream": False, "kv_transfer_params": params.to_dict()}
        if decode.model:
            body["model"] = decode.model
        error = _post(decode.prefill_url + "/v1/completions", body, receive.request_id,
                      self.config.prefill_http_timeout_s)
        if error:
            self._cancel(receive, f"prefill instance {decode.prefill_url!r}: {error}")

    def _cancel(self, receive: Receive, why: str) -> None:
        log.warning("receive of %r cancelled: %s", receive.request_id, why)
        try:
            self.client.cancel_receive(receive.receive_id)
        except grpc.RpcError as e:
            # a receive that already ended is not open any more; an unreachable server is seen by the workers
            log.info("CancelReceive for %r: %s: %s", receive.request_id, e.code().name, e.details())

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.client.close()


def _post(url: str, body: dict, request_id: str, timeout_s: float) -> str:
    """POSTs and reads the whole answer; returns "" on a 2xx, else what went wrong."""
    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="POST", headers={
        "Content-Type": "application/json", "X-Request-Id": f"{request_id}-prefill"})
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as r:
            r.read()
            return ""
    except urllib.error.HTTPError as e:
        return f"HTTP {e.code}: {e.read(300)!r}"
    except (urllib.error.URLError, OSError) as e:
        return f"{type(e).__name__}: {getattr(e, 'reason', e)}"
