"""The P/D proxy (pegaflow_jvm_pd.proxy) in front of fake OpenAI-compatible instances: routing, streaming, instances
that are down. Standard library only; run by PythonUnitTestsTest (pega-push)."""

import http.client
import json
import os
import socket
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from pegaflow_jvm_pd.proxy import ProxyServer  # noqa: E402


class FakeInstance(ThreadingHTTPServer):
    """An OpenAI-compatible vLLM front that records what it got; a streamed answer sends its second event only once
    the test lets it (so a relay that buffers would time out)."""

    daemon_threads = True

    def __init__(self, name):
        self.name = name
        self.received = []
        self.release_second_event = threading.Event()
        super().__init__(("127.0.0.1", 0), FakeHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_port}"


class FakeHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self._send(200, b"", "text/plain")

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.received.append((self.path, body))
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i, text in enumerate(("Hel", "lo")):
                if i == 1 and not self.server.release_second_event.wait(10):
                    text = "TIMEOUT"
                event = f"data: {json.dumps({'choices': [{'text': text}], 'from': self.server.name})}\n\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
            done = b"data: [DONE]\n\n"
            self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(done), done))
            self.wfile.flush()
        else:
            self._send(200, json.dumps({"choices": [{"text": "Hello"}], "from": self.server.name}).encode(),
                       "application/json")

    def _send(self, status, payload, content_type):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def closed_port_url():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now: connections are refused
    return f"http://127.0.0.1:{port}"


class ProxyTest(unittest.TestCase):
    def setUp(self):
        self.instances = []
        self.proxies = []

    def tearDown(self):
        for p in self.proxies:
            p.shutdown()
            p.server_close()
        for i in self.instances:
            i.release_second_event.set()
            i.shutdown()
            i.server_close()

    def fake(self, name):
        f = FakeInstance(name)
        self.instances.append(f)
        return f

    def proxy(self, prefill, decode, health_interval_s=30.0):
        p = ProxyServer(("127.0.0.1", 0), prefill, decode, timeout_s=20, health_interval_s=health_interval_s)
        threading.Thread(target=p.serve_forever, daemon=True).start()
        self.proxies.append(p)
        return p

    def post(self, proxy, path, body, raw=None):
        conn = http.client.HTTPConnection("127.0.0.1", proxy.server_port, timeout=20)
        data = raw if raw is not None else json.dumps(body).encode()
        conn.request("POST", path, body=data, headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        payload = r.read()
        conn.close()
        return r.status, payload

    def get(self, proxy, path):
        conn = http.client.HTTPConnection("127.0.0.1", proxy.server_port, timeout=20)
        conn.request("GET", path)
        r = conn.getresponse()
        payload = r.read().decode()
        conn.close()
        return r.status, payload

    def test_round_robin_over_decode_and_prefill_instances_with_the_prefill_named_in_kv_transfer_params(self):
        p0, p1, d0, d1 = self.fake("p0"), self.fake("p1"), self.fake("d0"), self.fake("d1")
        proxy = self.proxy([p0.url, p1.url], [d0.url, d1.url])
        answered_by = []
        for i in range(4):
            path = "/v1/completions" if i % 2 == 0 else "/v1/chat/completions"
            status, payload = self.post(proxy, path, {"model": "m", "prompt": f"p{i}", "max_tokens": 5,
                                                      "kv_transfer_params": {"keep": 1, "pd_push": {"x": 1},
                                                                             "pd_prefill_url": "http://evil:1"}})
            self.assertEqual(status, 200, payload)
            answered_by.append(json.loads(payload)["from"])
        self.assertEqual(answered_by, ["d0", "d1", "d0", "d1"])
        got = d0.received + d1.received
        self.assertEqual(sorted(b["prompt"] for _, b in got), ["p0", "p1", "p2", "p3"])
        self.assertEqual({path for path, _ in d1.received}, {"/v1/chat/completions"})
        prefill_urls = [b["kv_transfer_params"]["pd_prefill_url"] for _, b in sorted(got, key=lambda x: x[1]["prompt"])]
        self.assertEqual(prefill_urls, [p0.url, p1.url, p0.url, p1.url])
        for _, b in got:
            self.assertEqual(b["kv_transfer_params"]["pd_model"], "m")
            self.assertEqual(b["kv_transfer_params"]["keep"], 1)  # the client's own params stay
            self.assertNotIn("pd_push", b["kv_transfer_params"])  # but not the pd_* ones, which are the proxy's
            self.assertEqual(b["max_tokens"], 5)  # the decode instance gets the request as the client sent it
        self.assertEqual(p0.received + p1.received, [])  # the decode instance's connector calls prefill, not the proxy

    def test_streams_the_decode_answer_event_by_event(self):
        d0 = self.fake("d0")
        proxy = self.proxy([self.fake("p0").url], [d0.url])
        conn = http.client.HTTPConnection("127.0.0.1", proxy.server_port, timeout=20)
        conn.request("POST", "/v1/completions", body=json.dumps({"prompt": "x", "stream": True}),
                     headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        self.assertEqual(r.status, 200)
        self.assertEqual(r.getheader("Content-Type"), "text/event-stream")
        first = r.readline() + r.readline()  # one SSE event: its data line and the blank line
        # the decode instance holds its second event back until now: the first one came through the proxy alone
        self.assertIn(b'"text": "Hel"', first)
        d0.release_second_event.set()
        rest = r.read()
        conn.close()
        self.assertIn(b'"text": "lo"', rest)
        self.assertTrue(rest.rstrip().endswith(b"data: [DONE]"), rest)

    def test_a_decode_instance_that_is_down_is_skipped_and_counted(self):
        d1 = self.fake("d1")
        dead = closed_port_url()
        proxy = self.proxy([self.fake("p0").url], [dead, d1.url])
        for _ in range(3):
            status, payload = self.post(proxy, "/v1/completions", {"prompt": "x"})
            self.assertEqual(status, 200, payload)
            self.assertEqual(json.loads(payload)["from"], "d1")
        status, metrics = self.get(proxy, "/metrics")
        self.assertEqual(status, 200)
        self.assertIn(f'pd_proxy_instance_up{{role="decode",instance="{dead}"}} 0', metrics)
        self.assertIn(f'pd_proxy_instance_up{{role="decode",instance="{d1.url}"}} 1', metrics)
        self.assertIn(f'pd_proxy_routed_total{{role="decode",instance="{d1.url}"}} 3', metrics)
        self.assertIn('pd_proxy_requests_total{route="/v1/completions",status="200"} 3', metrics)

    def test_clear_errors_when_every_decode_or_every_prefill_instance_is_down(self):
        dead_d0, dead_d1 = closed_port_url(), closed_port_url()
        proxy = self.proxy([self.fake("p0").url], [dead_d0, dead_d1])
        status, payload = self.post(proxy, "/v1/completions", {"prompt": "x"})
        self.assertEqual(status, 503)
        message = json.loads(payload)["error"]["message"]
        self.assertEqual(message, f"no decode instance is up: {dead_d0} (connection refused), "
                                  f"{dead_d1} (connection refused)")

        dead_p = closed_port_url()
        proxy = self.proxy([dead_p], [self.fake("d0").url], health_interval_s=0.05)
        for _ in range(200):  # the first health check runs at start; wait for it to mark the instance down
            if not proxy.prefill.instances[0].up:
                break
            threading.Event().wait(0.05)
        status, payload = self.post(proxy, "/v1/completions", {"prompt": "x"})
        self.assertEqual(status, 503)
        error = json.loads(payload)["error"]
        self.assertEqual(error["type"], "service_unavailable")
        self.assertIn(f"no prefill instance is up: {dead_p} (connection refused)", error["message"])

    def test_bad_requests_get_openai_style_errors(self):
        proxy = self.proxy([self.fake("p0").url], [self.fake("d0").url])
        status, payload = self.post(proxy, "/v1/completions", None, raw=b"{not json")
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(payload)["error"]["type"], "invalid_request_error")
        status, payload = self.post(proxy, "/v1/embeddings", {"input": "x"})
        self.assertEqual(status, 404)
        self.assertIn("/v1/completions", json.loads(payload)["error"]["message"])


if __name__ == "__main__":
    unittest.main()
