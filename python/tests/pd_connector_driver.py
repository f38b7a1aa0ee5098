"""PdConnector driven as vLLM drives it (vllm_order.py), against two real pega-servers, on the host backend.

Usage: PYTHONPATH=python python3 python/tests/pd_connector_driver.py --prefill HOST:PORT --decode HOST:PORT
           --scenario roundtrip|timeout|kill-prefill|kill-decode [--tp N] [--old-load-order]
           [--prefill-pid PID] [--decode-pid PID]

A decode engine gets requests with ``pd_prefill_url`` set to a prefill engine's OpenAI-style front (served here);
its connector prepares the receive and posts the prompt there; the prefill engine computes it and its connector pushes
it layer by layer. Scenarios (prints ``OK <scenario> ...`` and exits 0, else ``FAIL ...`` and 1):

  roundtrip     with --decode-http: one request alone, of which a layer must reach the decode device (GET /pd)
                before the prefill pass marks its last layer; then two waves of six concurrent requests (1 to 250
                tokens): every prompt token's K and V of every layer and rank is on the decode blocks byte for byte
                before the decode engine computes anything; no load errors; every block of both engines is free
                again and no connector holds state afterwards
  timeout       the decode receive's deadline is 2 s and the prefill forward pass stalls 4 s after its first layer:
                the decode request takes vLLM's load-error path (every received block reported, recomputed from 0)
  kill-prefill  the prefill server is SIGKILLed mid-forward, once a layer is on the decode device: the decode request
                takes the load-error path (the servers' link ends the receive within seconds; a 30 s receive deadline
                is the backstop, and the run prints which ended it), the prefill engine frees the request's blocks
  kill-decode   the decode server is SIGKILLed mid-forward: the prefill push fails and frees its blocks, the decode
                workers report load errors (their server is gone), and a request that arrives afterwards is computed
                locally too (PrepareReceive cannot be made)
Every wait has a deadline: a hang fails the run.
"""

import argparse
import hashlib
import json
import math
import mmap
import os
import random
import signal
import sys
import threading
import time
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from pegaflow_jvm_pd.connector import PdConnector  # noqa: E402
from pegaflow_jvm_pd.host_kv import HostKvLayer  # noqa: E402
from vllm_order import Engine, Request, run_until  # noqa: E402

LAYERS, BLOCK, SLOT = 4, 16, 96  # SLOT: one token's K (or V) bytes of one layer and rank
NUM_BLOCKS = 48


class HostKv:
    """Each rank's KV cache: one /dev/shm object, layer after layer, each vLLM's (2, blocks, block, ...) layout."""

    def __init__(self, tag, tp_size):
        self.block_bytes = BLOCK * SLOT
        self.layer_bytes = 2 * NUM_BLOCKS * self.block_bytes
        self.names, self.maps = [], []
        for rank in range(tp_size):
            name = f"pega_kv_{tag}_{rank}_{uuid.uuid4().hex[:8]}"
            fd = os.open("/dev/shm/" + name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
            os.ftruncate(fd, LAYERS * self.layer_bytes)
            self.maps.append(mmap.mmap(fd, LAYERS * self.layer_bytes))
            os.close(fd)
            self.names.append(name)
        self._expected = {}

    def caches(self, rank):
        return {f"model.layers.{l}.self_attn.attn": HostKvLayer(self.names[rank], l * self.layer_bytes, NUM_BLOCKS,
                                                                 self.block_bytes) for l in range(LAYERS)}

    def expected(self, prompt, layer, rank, segment, token):
        """The bytes a forward pass writes for one token: a function of the prompt only, so the prefill engine and a
        decode engine that recomputes write the same ones."""
        key = (tuple(prompt), layer, rank, segment)
        data = self._expected.get(key)
        if data is None:
            seed = hashlib.sha256(repr(key).encode()).digest()
            data = self._expected[key] = random.Random(seed).randbytes((len(prompt) + 8) * SLOT)
        return data[token * SLOT:(token + 1) * SLOT]

    def _at(self, rank, layer, segment, block, slot):
        return layer * self.layer_bytes + segment * NUM_BLOCKS * self.block_bytes + block * self.block_bytes \
            + slot * SLOT

    def write(self, rank, layer, request, start, end):
        for t in range(start, end):
            block, slot = request.blocks[t // BLOCK], t % BLOCK
            for seg in (0, 1):
                at = self._at(rank, layer, seg, block, slot)
                self.maps[rank][at:at + SLOT] = self.expected(request.prompt_token_ids, layer, rank, seg, t)

    def mismatches(self, request, ranks):
        """(rank, layer, segment, token) of every prompt token whose bytes differ from what prefill wrote."""
        bad = []
        for rank in range(ranks):
            for layer in range(LAYERS):
                for seg in (0, 1):
                    for t in range(request.num_prompt_tokens):
                        at = self._at(rank, layer, seg, request.blocks[t // BLOCK], t % BLOCK)
                        if self.maps[rank][at:at + SLOT] != self.expected(request.prompt_token_ids, layer, rank,
                                                                          seg, t):
                            bad.append((rank, layer, seg, t))
        return bad

    def scrub(self):
        """Fills the caches with noise, so bytes left from a previous request cannot pass a check."""
        for m in self.maps:
            m[:] = os.urandom(len(m))

    def close(self):
        for m, name in zip(self.maps, self.names):
            m.close()
            os.unlink("/dev/shm/" + name)


class PrefillFront(ThreadingHTTPServer):
    """The prefill instance's OpenAI-compatible front: a /v1/completions request becomes an engine request; the
    answer comes when it finished."""

    daemon_threads = True

    def __init__(self, engine):
        self.engine = engine
        self.bodies = []
        super().__init__(("127.0.0.1", 0), _FrontHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_port}"


class _FrontHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.bodies.append(body)
        r = Request(f"cmpl-{uuid.uuid4().hex[:12]}", list(body["prompt"]), int(body["max_tokens"]),
                    body.get("kv_transfer_params"))
        self.server.engine.add(r)
        ok = r.done.wait(120)
        payload = json.dumps({"id": r.request_id, "choices": [{"text": "x"}]} if ok else {"error": "timeout"}).encode()
        try:
            self.send_response(200 if ok else 504)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except OSError:
            pass  # the decode side stopped waiting (its deadline): nothing to answer


class Failure(AssertionError):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def sigkill(pid, what):
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while os.path.exists(f"/proc/{pid}") and _state(pid) != "Z":
        check(time.monotonic() < deadline, f"the {what} server (pid {pid}) did not die")
        time.sleep(0.05)
    print(f"killed the {what} server (pid {pid})", flush=True)


def _state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def prompt(rng, n):
    return [rng.randrange(1, 150000) for _ in range(n)]


class Run:
    def __init__(self, args, decode_extra=None, prefill_extra=None):
        self.tp = args.tp
        tag = uuid.uuid4().hex[:6]
        self.prefill_kv, self.decode_kv = HostKv("p" + tag, self.tp), HostKv("d" + tag, self.tp)
        self.prefill_kv.scrub()
        self.decode_kv.scrub()
        self.prefill = self.decode = None
        try:
            self.prefill = Engine(f"drv-prefill-{tag}", PdConnector, self.prefill_kv, self.tp, NUM_BLOCKS, BLOCK,
                                  dict({"pega_address": args.prefill}, **(prefill_extra or {})),
                                  start_load_after_forward=not args.old_load_order, seed=1)
            self.decode = Engine(f"drv-decode-{tag}", PdConnector, self.decode_kv, self.tp, NUM_BLOCKS, BLOCK,
                                 dict({"pega_address": args.decode}, **(decode_extra or {})),
                                 start_load_after_forward=not args.old_load_order, seed=2)
        except BaseException:
            if self.prefill is not None:
                self.prefill.shutdown()
            self.prefill_kv.close()
            self.decode_kv.close()
            raise
        self.front = PrefillFront(self.prefill)
        self.mismatched = {}
        self.decode.on_received = lambda r: self.mismatched.__setitem__(
            r.request_id, self.decode_kv.mismatches(r, self.tp))
        self.mismatched_at_end = {}
        self.decode.on_finished = lambda r: self.mismatched_at_end.__setitem__(
            r.request_id, self.decode_kv.mismatches(r, self.tp))
        self.requests = []

    def submit(self, lengths, rng):
        batch = []
        for n in lengths:
            r = Request(f"req-{len(self.requests)}", prompt(rng, n), 3,
                        {"pd_prefill_url": self.front.url, "pd_model": "sim"})
            self.requests.append(r)
            batch.append(r)
            self.decode.add(r)
        return batch

    def run(self, timeout_s, requests=None):
        reqs = requests or self.requests
        run_until([self.decode, self.prefill],
                  lambda: all(r.done.is_set() for r in reqs) and not self.decode.busy() and not self.prefill.busy(),
                  timeout_s)

    def check_clean(self):
        for e in (self.prefill, self.decode):
            check(len(e.free) == NUM_BLOCKS, f"{e.name}: {NUM_BLOCKS - len(e.free)} blocks never freed")
            s = e.scheduler._scheduler
            check(not s._receives and not s._sending, f"{e.name}: scheduler still holds {s._receives} {s._sending}")
            for w in e.workers:
                check(not w._worker._pushes and not w._worker._recvs, f"{e.name}: a worker still holds transfers")

    def close(self):
        self.front.shutdown()
        self.front.server_close()
        self.decode.shutdown()
        self.prefill.shutdown()
        self.prefill_kv.close()
        self.decode_kv.close()


def timed_save_kv_layer(engine):
    """Wraps each worker's save_kv_layer to time what a forward pass pays per layer for the push (host backend: the
    ready store itself; on a GPU it is a CUDA event and a queue put instead)."""
    costs = []
    for w in engine.workers:
        def timed(name, kv, attn, _save=w.save_kv_layer):
            t0 = time.perf_counter_ns()
            _save(name, kv, attn)
            costs.append(time.perf_counter_ns() - t0)
        w.save_kv_layer = timed
    return costs


def receives_in_flight(args):
    req = urllib.request.Request(f"http://{args.decode_http}/pd",
                                 headers={"Authorization": f"Bearer {args.admin_token}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r).get("receives") or []


def wait_for_a_layer(args, r, timeout_s=30.0):
    """Layers of ``r`` on the decode device (its receive's entry in GET /pd) once there is one, else 0 at the
    deadline; without --decode-http, a second's wait instead."""
    if not args.decode_http:
        time.sleep(1.0)
        return 0
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        # a receive's entry counts the layers on the decode device over all its ranks
        done = [x["layersDone"] for x in receives_in_flight(args) if x["requestId"] == r.request_id]
        if done and done[0] >= 1:
            return done[0]
        time.sleep(0.01)
    return 0


def layer_by_layer(args, run, rng):
    """One request alone; before the prefill pass marks its last layer ready, a layer of it must be on the decode
    device (GET /pd on the decode server): the push runs while the forward pass does, not after it."""
    (r,) = run.submit([250], rng)
    seen = []

    def before_last_layer(layer):
        if layer == LAYERS - 1 and not seen:
            seen.append(wait_for_a_layer(args, r))

    run.prefill.layer_hook = before_last_layer
    run.run(90, [r])
    run.prefill.layer_hook = None
    check(seen and seen[0] >= 1, f"no layer of {r.request_id} reached the decode device before the prefill pass "
                                 f"marked its last layer (layers done: {seen})")
    check(r.received is True and run.mismatched.get(r.request_id) == [], f"{r.request_id}: not received intact")
    return seen[0]


def roundtrip(args):
    run = Run(args)
    costs = timed_save_kv_layer(run.prefill)
    try:
        rng = random.Random(5)
        early = layer_by_layer(args, run, rng) if args.decode_http else None
        received = 1 if early is not None else 0
        for wave in range(2):
            batch = run.submit([37, 100, 64, 16, 1, 250] if wave == 0 else [250, 17, 1, 48, 99, 31], rng)
            run.run(90, batch)
            for r in batch:
                check(r.received is True, f"{r.request_id} ({r.num_prompt_tokens} tokens) took the load-error path")
                check(not r.invalid_blocks_reported, f"{r.request_id}: load errors {r.invalid_blocks_reported}")
                check(run.mismatched.get(r.request_id) == [],
                      f"{r.request_id}: {len(run.mismatched.get(r.request_id) or [])} token slots differ, first "
                      f"{(run.mismatched.get(r.request_id) or [None])[:3]}")
                check(len(r.output_token_ids) == 3, f"{r.request_id}: {len(r.output_token_ids)} tokens")
                received += 1
        expected_bodies = 12 + (1 if early is not None else 0)
        check(len(run.front.bodies) == expected_bodies, f"{len(run.front.bodies)} prefill requests, not {expected_bodies}")
        for body in run.front.bodies:
            check(body["max_tokens"] == 1 and body["model"] == "sim" and "pd_push" in body["kv_transfer_params"],
                  f"prefill request {body}")
        run.check_clean()
        token_slots = sum(r.num_prompt_tokens for r in run.requests) * LAYERS * 2 * args.tp
        costs.sort()
        print(f"OK roundtrip tp={args.tp} requests={received} token_slots_checked={token_slots} "
              f"bytes_checked={token_slots * SLOT} save_kv_layer_us_p50={costs[len(costs) // 2] / 1000:.1f} "
              f"p99={costs[len(costs) * 99 // 100] / 1000:.1f} layers_on_decode_before_the_last_was_ready="
              f"{early if early is not None else 'not checked'}", flush=True)
    finally:
        run.close()


def expect_load_error_path(run, r, what):
    check(r.done.is_set(), f"{what}: {r.request_id} not finished")
    check(r.received is False, f"{what}: {r.request_id} was not failed (received={r.received})")
    receive_blocks = math.ceil(r.num_prompt_tokens / BLOCK)
    check(len(r.invalid_blocks_reported) == receive_blocks,
          f"{what}: {len(r.invalid_blocks_reported)} blocks reported as load errors, {receive_blocks} expected")
    check(r.recomputed_from == 0, f"{what}: recomputed from token {r.recomputed_from}, expected 0")
    check(len(r.output_token_ids) == 3, f"{what}: {len(r.output_token_ids)} tokens")
    bad = run.mismatched_at_end.get(r.request_id)  # recomputed locally: the same bytes, written by the decode engine
    check(bad == [], f"{what}: {len(bad or [])} recomputed token slots differ")


def timeout(args):
    run = Run(args, decode_extra={"receive_timeout_s": 2.0}, prefill_extra={"push_timeout_s": 20.0})
    stalled = []

    def stall(layer):
        if layer == 0 and not stalled:
            stalled.append(1)
            time.sleep(4.0)

    run.prefill.layer_hook = stall
    try:
        (r,) = run.submit([100], random.Random(6))
        t0 = time.monotonic()
        run.run(60)
        took = time.monotonic() - t0
        expect_load_error_path(run, r, "timeout")
        run.check_clean()
        print(f"OK timeout tp={args.tp} load_error_blocks={len(r.invalid_blocks_reported)} seconds={took:.1f}",
              flush=True)
    finally:
        run.close()


LINK_S = 20.0  # a link ends a killed server's transfers within seconds; a deadline would take RECEIVE_DEADLINE_S
RECEIVE_DEADLINE_S = 30.0


def kill(args, side):
    long = {"receive_timeout_s": 600.0, "push_timeout_s": 600.0}
    # the decode receive keeps a short deadline of its own as the backstop: the servers' link should end it first,
    # and the run says which did (a CI run once saw a killed prefill server's link not noticed by the decode server)
    decode_extra = dict(long, receive_timeout_s=RECEIVE_DEADLINE_S) if side == "prefill" else long
    run = Run(args, decode_extra=decode_extra, prefill_extra=long)
    pid = args.prefill_pid if side == "prefill" else args.decode_pid
    check(pid, f"--{side}-pid is needed")
    killed = []

    def kill_mid_forward(layer):
        if layer == 1 and not killed:
            # layer 0 is marked ready: once it is on the decode device, the servers are linked (a prefill server that
            # dies before it reached the decode server leaves the receive to its deadline, which is not this case)
            check(wait_for_a_layer(args, r) >= 1, f"kill-{side}: no layer of {r.request_id} reached the decode device")
            killed.append(time.monotonic())
            sigkill(pid, side)

    run.prefill.layer_hook = kill_mid_forward
    try:
        rng = random.Random(7)
        (r,) = run.submit([100], rng)
        run.run(90)
        took = time.monotonic() - killed[0]
        expect_load_error_path(run, r, f"kill-{side}")
        check(took < 60, f"kill-{side}: {took:.1f} s from the kill to the end")
        extra = " ended_by=" + ("the link" if took < LINK_S else "the receive deadline (the link did not end it)")
        if side == "decode":
            (late,) = run.submit([40], rng)  # its decode server is gone: PrepareReceive fails at once
            t1 = time.monotonic()
            run.run(60, [late])
            expect_load_error_path(run, late, "kill-decode, a later request")
            extra += f" later_request_seconds={time.monotonic() - t1:.1f}"
        run.check_clean()
        print(f"OK kill-{side} tp={args.tp} seconds_after_kill={took:.1f}{extra}", flush=True)
    finally:
        run.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefill", required=True)
    ap.add_argument("--decode", required=True)
    ap.add_argument("--scenario", required=True, choices=["roundtrip", "timeout", "kill-prefill", "kill-decode"])
    ap.add_argument("--tp", type=int, default=1)
    ap.add_argument("--old-load-order", action="store_true",
                    help="start_load_kv before the forward pass (vLLM before async loads moved after it)")
    ap.add_argument("--decode-http", default="", help="the decode server's HTTP host:port, for its GET /pd view")
    ap.add_argument("--admin-token", default="")
    ap.add_argument("--prefill-pid", type=int, default=0)
    ap.add_argument("--decode-pid", type=int, default=0)
    args = ap.parse_args()
    try:
        if args.scenario == "roundtrip":
            roundtrip(args)
        elif args.scenario == "timeout":
            timeout(args)
        else:
            kill(args, args.scenario.split("-")[1])
    except (Failure, TimeoutError) as e:
        print(f"FAIL {args.scenario}: {e}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
