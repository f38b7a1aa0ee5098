"""P/D proxy: an OpenAI-compatible front (``/v1/completions``, ``/v1/chat/completions``) over prefill and decode vLLM
instances that run ``PdConnector``.

Each request goes to the next decode instance (round robin) with ``kv_transfer_params`` naming the next prefill
instance (round robin); the decode instance's connector sends the prompt to that prefill instance with ``max_tokens``
1 and its handshake, and the proxy relays the decode instance's answer, streamed chunk by chunk when the client asked
for ``stream``. A health check (``GET /health``, every ``--health-interval`` seconds) takes instances that do not
answer out of the rotation until they answer again; a decode instance that refuses the connection is skipped for the
next one. When no instance of a role is up the client gets 503 with a JSON error naming every instance and why.
``GET /metrics`` serves Prometheus text. Python standard library only.

    python -m pegaflow_jvm_pd.proxy --port 8000 --prefill http://p0:8100 --prefill http://p1:8100 \\
        --decode http://d0:8200 --decode http://d1:8200
"""

from __future__ import annotations

import argparse
import http.client
import json
import logging
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, List, Optional, Tuple

log = logging.getLogger("pegaflow_jvm_pd.proxy")

ROUTES = ("/v1/completions", "/v1/chat/completions")
_HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "te", "trailer", "upgrade"}


@dataclass
class Instance:
    role: str
    url: str
    up: bool = True
    reason: str = ""
    host: str = field(init=False)
    port: int = field(init=False)

    def __post_init__(self):
        u = urllib.parse.urlsplit(self.url)
        if u.scheme != "http" or not u.hostname:
            raise ValueError(f"--{self.role}: expected http://host:port, got {self.url!r}")
        self.url = self.url.rstrip("/")
        self.host, self.port = u.hostname, u.port or 80


class Pool:
    """Round robin over the instances of one role that are up."""

    def __init__(self, role: str, urls: List[str]):
        if not urls:
            raise ValueError(f"at least one --{role} instance is needed")
        self.role = role
        self.instances = [Instance(role, u) for u in urls]
        self._next = 0
        self._lock = threading.Lock()

    def order(self) -> List[Instance]:
        """Every instance that is up, starting with the next in turn."""
        with self._lock:
            start = self._next
            self._next = (self._next + 1) % len(self.instances)
        rotated = self.instances[start:] + self.instances[:start]
        return [i for i in rotated if i.up]

    def describe(self) -> str:
        return ", ".join(f"{i.url} ({'up' if i.up else i.reason or 'down'})" for i in self.instances)


class Metrics:
    def __init__(self):
        self._lock = threading.Lock()
        self.requests: Dict[Tuple[str, int], int] = {}
        self.upstream_errors: Dict[Tuple[str, str], int] = {}
        self.routed: Dict[Tuple[str, str], int] = {}
        self.seconds_sum = 0.0
        self.seconds_count = 0

    def request(self, route: str, status: int, seconds: float) -> None:
        with self._lock:
            self.requests[(route, status)] = self.requests.get((route, status), 0) + 1
            self.seconds_sum += seconds
            self.seconds_count += 1

    def count(self, table: Dict, key) -> None:
        with self._lock:
            table[key] = table.get(key, 0) + 1

    def render(self, pools: List[Pool]) -> str:
        with self._lock:
            lines = ["# HELP pd_proxy_requests_total Requests answered, by route and HTTP status.",
                     "# TYPE pd_proxy_requests_total counter"]
            lines += [f'pd_proxy_requests_total{{route="{r}",status="{s}"}} {n}'
                      for (r, s), n in sorted(self.requests.items())]
            lines += ["# HELP pd_proxy_routed_total Requests sent to an instance, by role and instance.",
                      "# TYPE pd_proxy_routed_total counter"]
            lines += [f'pd_proxy_routed_total{{role="{r}",instance="{u}"}} {n}'
                      for (r, u), n in sorted(self.routed.items())]
            lines += ["# HELP pd_proxy_upstream_errors_total Instances that could not be reached or failed a request.",
                      "# TYPE pd_proxy_upstream_errors_total counter"]
            lines += [f'pd_proxy_upstream_errors_total{{role="{r}",instance="{u}"}} {n}'
                      for (r, u), n in sorted(self.upstream_errors.items())]
            lines += ["# HELP pd_proxy_request_seconds Time from a request's arrival to its last byte.",
                      "# TYPE pd_proxy_request_seconds summary",
                      f"pd_proxy_request_seconds_sum {self.seconds_sum:.6f}",
                      f"pd_proxy_request_seconds_count {self.seconds_count}"]
        lines += ["# HELP pd_proxy_instance_up 1 while an instance answers its health check.",
                  "# TYPE pd_proxy_instance_up gauge"]
        for pool in pools:
            lines += [f'pd_proxy_instance_up{{role="{i.role}",instance="{i.url}"}} {int(i.up)}'
                      for i in pool.instances]
        return "\n".join(lines) + "\n"


class ProxyServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, prefill: List[str], decode: List[str], timeout_s: float = 600.0,
                 health_interval_s: float = 5.0):
        self.prefill, self.decode = Pool("prefill", prefill), Pool("decode", decode)
        self.timeout_s = timeout_s
        self.metrics = Metrics()
        self._stop = threading.Event()
        super().__init__(address, _Handler)
        self._health = threading.Thread(target=self._check_health, args=(health_interval_s,), name="pd-proxy-health",
                                        daemon=True)
        self._health.start()

    def _check_health(self, interval_s: float) -> None:
        while True:
            for instance in self.prefill.instances + self.decode.instances:
                ok, reason = _health(instance, min(interval_s, 5.0))
                if ok != instance.up:
                    log.warning("%s instance %s is %s%s", instance.role, instance.url, "up" if ok else "down",
                                "" if ok else f": {reason}")
                instance.up, instance.reason = ok, reason
            if self._stop.wait(interval_s):
                return

    def server_close(self) -> None:
        self._stop.set()
        super().server_close()


def _health(instance: Instance, timeout_s: float) -> Tuple[bool, str]:
    conn = http.client.HTTPConnection(instance.host, instance.port, timeout=timeout_s)
    try:
        conn.request("GET", "/health")
        r = conn.getresponse()
        r.read()
        return (True, "") if r.status == 200 else (False, f"/health answered {r.status}")
    except (OSError, http.client.HTTPException) as e:
        return False, _why(e)
    finally:
        conn.close()


def _why(e: BaseException) -> str:
    if isinstance(e, ConnectionRefusedError):
        return "connection refused"
    if isinstance(e, (socket.timeout, TimeoutError)):
        return "timed out"
    return f"{type(e).__name__}: {e}"


class _Handler(BaseHTTPRequestHandler):
    server: ProxyServer
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # the access log goes through logging, escaped
        log.debug("%s %r", self.address_string(), fmt % args)

    def do_GET(self):
        self._route = None  # GETs are not counted (a keep-alive connection reuses this handler)
        if self.path == "/metrics":
            self._send(200, self.server.metrics.render([self.server.prefill, self.server.decode]).encode(),
                       "text/plain; version=0.0.4")
        elif self.path == "/health":
            self._send(200, b"", "text/plain")
        else:
            self._error(404, f"no route GET {self.path[:200]!r}", "not_found")

    def do_POST(self):
        self._started = time.monotonic()
        route = self.path.split("?", 1)[0]
        self._route = route if route in ROUTES else "other"
        if route in ROUTES:
            self._proxy(route)
        else:
            self._error(404, f"no route POST {self.path[:200]!r}; this proxy serves {', '.join(ROUTES)}", "not_found")

    def _count(self, status: int) -> None:
        """Counts a POST before its last byte goes out, so a client that read the answer finds it in /metrics."""
        route = getattr(self, "_route", None)
        if route is not None:
            self.server.metrics.request(route, status, time.monotonic() - self._started)

    def _proxy(self, route: str) -> int:
        try:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"null")
            if not isinstance(body, dict):
                raise ValueError("the body must be a JSON object")
        except (ValueError, UnicodeDecodeError) as e:
            return self._error(400, f"invalid request body: {e}", "invalid_request_error")
        prefills = self.server.prefill.order()
        if not prefills:
            return self._error(503, f"no prefill instance is up: {self.server.prefill.describe()}",
                               "service_unavailable")
        prefill = prefills[0]
        # the pd_* keys are this proxy's to set: a client's own could name a prefill instance or a handshake
        params = {k: v for k, v in dict(body.get("kv_transfer_params") or {}).items() if not k.startswith("pd_")}
        params["pd_prefill_url"] = prefill.url
        if body.get("model"):
            params["pd_model"] = body["model"]
        forwarded = dict(body, kv_transfer_params=params)
        data = json.dumps(forwarded).encode()
        for decode in self.server.decode.order():
            conn = http.client.HTTPConnection(decode.host, decode.port, timeout=self.server.timeout_s)
            try:
                headers = {"Content-Type": "application/json", "Content-Length": str(len(data))}
                for h in ("Authorization", "X-Request-Id"):
                    if self.headers.get(h):
                        headers[h] = self.headers[h]
                conn.request("POST", route, body=data, headers=headers)
                upstream = conn.getresponse()
            except (OSError, http.client.HTTPException) as e:
                conn.close()
                reason = _why(e)
                self.server.metrics.count(self.server.metrics.upstream_errors, ("decode", decode.url))
                if isinstance(e, ConnectionRefusedError):
                    decode.up, decode.reason = False, reason  # out of the rotation until its health check answers
                    continue
                # it may have started the request: do not run it twice
                return self._error(502, f"decode instance {decode.url} failed: {reason}", "bad_gateway")
            self.server.metrics.count(self.server.metrics.routed, ("decode", decode.url))
            self.server.metrics.count(self.server.metrics.routed, ("prefill", prefill.url))
            try:
                return self._relay(upstream)
            finally:
                conn.close()
        return self._error(503, f"no decode instance is up: {self.server.decode.describe()}", "service_unavailable")

    def _relay(self, upstream: http.client.HTTPResponse) -> int:
        self.send_response(upstream.status)
        for name, value in upstream.getheaders():
            if name.lower() not in _HOP_HEADERS:
                self.send_header(name, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            while True:
                chunk = upstream.read1(65536)
                if not chunk:
                    break
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self._count(upstream.status)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (OSError, http.client.HTTPException) as e:
            # the headers are gone already: end the connection so the client sees a truncated answer
            log.warning("relay from a decode instance broke: %s", _why(e))
            self._count(502)
            self.close_connection = True
        return upstream.status

    def _error(self, status: int, message: str, kind: str) -> int:
        payload = json.dumps({"error": {"message": message, "type": kind, "code": status}}).encode()
        self._count(status)
        self._send(status, payload, "application/json")
        return status

    def _send(self, status: int, payload: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def main(argv: Optional[List[str]] = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m pegaflow_jvm_pd.proxy", description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--prefill", action="append", required=True, help="http://host:port of a prefill instance")
    ap.add_argument("--decode", action="append", required=True, help="http://host:port of a decode instance")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds a decode instance may take to answer")
    ap.add_argument("--health-interval", type=float, default=5.0)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    server = ProxyServer((args.host, args.port), args.prefill, args.decode, args.timeout, args.health_interval)
    log.info("P/D proxy on %s:%d; prefill: %s; decode: %s", args.host, server.server_port,
             server.prefill.describe(), server.decode.describe())
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
