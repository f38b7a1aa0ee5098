"""The P/D push through PdConnector on one GPU: gpu-tests/pd_push.py's measurement, but every call the way vLLM makes
it (python/tests/vllm_order.py) instead of the push client called by hand. Started by `DRIVER=connector
gpu-tests/pd_push.sh`, which provides the two pega-servers (cuda backend).

Two processes on GPU 0, each a vllm_order engine with PdConnector over torch KV tensors in vLLM's FlashAttention
paged layout, (2, blocks, 16, 8, 128) bf16 per layer, 36 layers (Qwen3-8B's cache), TP 1:

  decode (this process)  a request with pd_prefill_url -> get_num_new_matched_tokens / update_state_after_alloc:
                         the connector's scheduler side prepares the receive and posts the prompt to the prefill
                         process's /v1/completions; the decode worker polls its load_state in get_finished
  prefill (child)        the request arrives over HTTP; its forward pass runs per layer one matmul of a Qwen3-8B
                         layer's weight FLOPs, writes the layer's KV into its (scattered) blocks and calls
                         save_kv_layer, whose CUDA event the connector's helper thread turns into ready = L + 1

Per token count it prints the medians over RUNS after one warm-up: forward (first layer started -> last layer's KV
written on the GPU), added latency (that -> the decode worker's get_finished reported the request), the overlaps from
the decode server's GET /pd timeline (python/pegaflow_jvm_push/timeline.py), and checks every prompt token's K and V of
every layer on the decode blocks against what the prefill pass wrote. Exits 1 if a run failed or a byte differs.

`--device cpu` is a smoke run of this script without a GPU (servers with the host backend): the KV tensors are
/dev/shm objects mapped by torch, registered as host-backend layers, and the matmul narrowed with `--layer-cols`;
its figures say nothing about a GPU.
"""

import argparse
import hashlib
import multiprocessing as mp
import os
import queue
import random
import sys
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for p in (HERE, os.path.join(ROOT, "python"), os.path.join(ROOT, "python", "tests")):
    sys.path.insert(0, p)

from pd_push import BLOCK, HEAD, HIDDEN, KV_HEADS, LAYER_COLS, LAYERS, blocks_for, timeline_of  # noqa: E402
from pd_report import add_timing, finish, print_run, print_table, summary  # noqa: E402


class TorchKv:
    """vLLM's KV tensors on cuda:0 and the synthetic forward pass that fills them (vllm_order's KV store)."""

    def __init__(self, torch, nb, max_tokens=0, device="cuda", layer_cols=LAYER_COLS):
        self.torch = torch
        self.cuda = device == "cuda"
        self.device = "cuda:0" if self.cuda else "cpu"
        names = [f"model.layers.{i}.self_attn.attn" for i in range(LAYERS)]
        self.host, self._shm = None, None
        if self.cuda:
            self.tensors = {n: torch.zeros((2, nb, BLOCK, KV_HEADS, HEAD), dtype=torch.bfloat16, device=self.device)
                            for n in names}
        else:
            from pegaflow_jvm_pd.host_kv import HostKvLayer

            numel = 2 * nb * BLOCK * KV_HEADS * HEAD
            self._shm = f"pega_kv_smoke_{uuid.uuid4().hex[:12]}"
            fd = os.open("/dev/shm/" + self._shm, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
            os.ftruncate(fd, LAYERS * numel * 2)
            os.close(fd)
            whole = torch.from_file("/dev/shm/" + self._shm, shared=True, size=LAYERS * numel, dtype=torch.bfloat16)
            self.tensors = {n: whole[i * numel:(i + 1) * numel].view(2, nb, BLOCK, KV_HEADS, HEAD)
                            for i, n in enumerate(names)}
            self.host = {n: HostKvLayer(self._shm, i * numel * 2, nb, BLOCK * KV_HEADS * HEAD * 2)
                         for i, n in enumerate(names)}
        self._sources = {}
        self.timing = None  # prefill: (forward start ns, per-layer ready ns) of the request in the forward pass
        self._events = queue.SimpleQueue()
        if max_tokens:
            g = torch.Generator(device=self.device)
            g.manual_seed(7)
            self.x = torch.randn((max_tokens, HIDDEN), dtype=torch.bfloat16, device=self.device, generator=g)
            self.w = torch.randn((HIDDEN, layer_cols), dtype=torch.bfloat16, device=self.device, generator=g) * 0.01
            self.y = torch.empty((max_tokens, layer_cols), dtype=torch.bfloat16, device=self.device)
            threading.Thread(target=self._stamp, daemon=True).start()
        else:
            self.x = None

    def caches(self, rank):
        return self.tensors if self.host is None else self.host

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def close(self):
        if self._shm:
            os.unlink("/dev/shm/" + self._shm)

    def prepare(self, request):
        """Generates the request's KV (random bits, a function of the prompt) before its forward pass."""
        key = getattr(request, "kv_key", None)
        if key is None:  # hashed once per request: write() runs inside the timed forward pass
            key = request.kv_key = hashlib.sha256(repr(request.prompt_token_ids).encode()).hexdigest()
        if key not in self._sources:
            self._sources.clear()
            blocks = blocks_for(len(request.prompt_token_ids))
            g = self.torch.Generator(device=self.device)
            srcs = []
            for layer in range(LAYERS):
                g.manual_seed(int(key[:12], 16) + layer)
                raw = self.torch.randint(-32768, 32768, (2, blocks, BLOCK, KV_HEADS, HEAD), dtype=self.torch.int32,
                                         device=self.device, generator=g)
                srcs.append(raw.to(self.torch.int16).view(self.torch.bfloat16))
            self._sources[key] = srcs
            self.sync()
        return self._sources[key]

    def write(self, rank, layer, request, start, end):
        torch = self.torch
        srcs = self.prepare(request)
        blocks = blocks_for(len(request.prompt_token_ids))
        if start == 0 and end >= len(request.prompt_token_ids):  # the prefill pass: the whole prompt
            if layer == 0:
                self.sync()
                self.timing = (time.monotonic_ns(), [0] * LAYERS)
            if self.x is not None:
                torch.mm(self.x[:end], self.w, out=self.y[:end])  # the layer's compute
            if layer == 0:
                request.block_index = torch.tensor(request.blocks[:blocks], dtype=torch.long, device=self.device)
            self.tensors[f"model.layers.{layer}.self_attn.attn"].index_copy_(1, request.block_index, srcs[layer])
            if self.x is not None and self.cuda:
                ev = torch.cuda.Event()
                ev.record()
                self._events.put((self.timing[1], layer, ev))
            elif self.x is not None:
                self.timing[1][layer] = time.monotonic_ns()  # CPU ops are done when they return
        else:  # a decode step: the prompt's last token (after a push), or a generated one
            for t in range(start, min(end, len(request.prompt_token_ids))):
                self.tensors[f"model.layers.{layer}.self_attn.attn"][:, request.blocks[t // BLOCK], t % BLOCK] = \
                    srcs[layer][:, t // BLOCK, t % BLOCK]

    def _stamp(self):
        while True:
            ready_ns, layer, ev = self._events.get()
            ev.synchronize()
            ready_ns[layer] = time.monotonic_ns()

    def mismatched_layers(self, request):
        torch = self.torch
        srcs = self.prepare(request)
        n = len(request.prompt_token_ids)
        blocks = blocks_for(n)
        idx = torch.tensor(request.blocks[:blocks], dtype=torch.long, device=self.device)
        bad = []
        for layer in range(LAYERS):
            got = self.tensors[f"model.layers.{layer}.self_attn.attn"].index_select(1, idx)
            got = got.reshape(2, blocks * BLOCK, KV_HEADS, HEAD)[:, :n].view(torch.int16)
            want = srcs[layer].reshape(2, blocks * BLOCK, KV_HEADS, HEAD)[:, :n].view(torch.int16)
            if not torch.equal(got, want):
                bad.append(layer)
        return bad


def prefill_main(conn, args, nb, max_tokens):
    import torch
    from pd_connector_driver import PrefillFront
    from pegaflow_jvm_pd.connector import PdConnector
    from vllm_order import Engine, run_until

    if args.device == "cuda":
        torch.cuda.set_device(0)
    kv = TorchKv(torch, nb, max_tokens, args.device, args.layer_cols)
    engine = Engine("gpu-prefill", PdConnector, kv, 1, nb, BLOCK,
                    {"pega_address": args.prefill, "push_timeout_s": args.timeout}, seed=11)
    add = engine.add

    def add_prepared(request):
        kv.prepare(request)
        add(request)
        threading.Thread(target=report, args=(request,), daemon=True).start()

    def report(request):
        if request.done.wait(args.timeout + 60):
            decode_id = (request.kv_transfer_params or {}).get("pd_push", {}).get("decode_request_id", "")
            end = time.monotonic() + 10
            while kv.timing and 0 in kv.timing[1] and time.monotonic() < end:
                time.sleep(0.001)
            conn.send(("timing", decode_id, kv.timing))

    engine.add = add_prepared
    front = PrefillFront(engine)
    conn.send(("ready", front.url))
    stop = threading.Event()
    threading.Thread(target=lambda: (conn.poll(None), stop.set()), daemon=True).start()
    try:
        run_until([engine], stop.is_set, 10 ** 9)
    finally:
        front.shutdown()
        engine.shutdown()
        kv.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefill", default="127.0.0.1:50061")
    ap.add_argument("--decode", default="127.0.0.1:50062")
    ap.add_argument("--decode-http", default="127.0.0.1:9102")
    ap.add_argument("--admin-token", default="")
    ap.add_argument("--tokens", default="512,2048,8192,16000")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--label", default="")
    ap.add_argument("--out", default=None)
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--layer-cols", type=int, default=LAYER_COLS, help="the per-layer matmul's width")
    args = ap.parse_args()
    import torch
    from pegaflow_jvm_pd.connector import PdConnector
    from vllm_order import Engine, Request, run_until

    token_counts = [int(t) for t in args.tokens.split(",") if t.strip()]
    max_tokens = max(token_counts)
    nb = blocks_for(max_tokens) + 64
    ctx = mp.get_context("spawn")
    p_conn, p_child = ctx.Pipe()
    child = ctx.Process(target=prefill_main, args=(p_child, args, nb, max_tokens), daemon=True)
    child.start()
    if not p_conn.poll(300):
        raise TimeoutError("the prefill process did not start")
    _, front_url = p_conn.recv()
    if args.device == "cuda":
        torch.cuda.set_device(0)
    kv = TorchKv(torch, nb, device=args.device)
    decode = Engine("gpu-decode", PdConnector, kv, 1, nb, BLOCK,
                    {"pega_address": args.decode, "receive_timeout_s": args.timeout}, seed=12)
    worker = decode.workers[0]
    seen_ns = {}
    get_finished = worker.get_finished

    def timed_get_finished(ids):
        sending, recving = get_finished(ids)
        now = time.monotonic_ns()
        for rid in recving or ():
            seen_ns[rid] = now
        return sending, recving

    worker.get_finished = timed_get_finished
    verified = {}
    decode.on_received = lambda r: verified.__setitem__(r.request_id, kv.mismatched_layers(r))
    kv_layer_bytes = 2 * BLOCK * KV_HEADS * HEAD * 2
    print(f"PDCONNECTOR label={args.label} layers={LAYERS} block={BLOCK} kv_heads={KV_HEADS} head={HEAD} bf16 nb={nb}",
          flush=True)
    results, failures = [], 0
    for tokens in token_counts:
        rows = []
        for run in range(args.runs + 1):
            rid = f"d-{tokens}-{run}"
            rng = random.Random(tokens * 100 + run)
            r = Request(rid, [rng.randrange(1, 150000) for _ in range(tokens)], 2,
                        {"pd_prefill_url": front_url, "pd_model": "synthetic"})
            kv.prepare(r)
            decode.add(r)
            error = None
            try:
                run_until([decode], lambda: r.done.is_set() and not decode.busy(), args.timeout + 60)
            except TimeoutError as e:
                error = str(e)
            timing = None
            while p_conn.poll(10):
                msg = p_conn.recv()
                if msg[0] == "timing" and msg[1] == rid:
                    timing = msg[2]
                    break
            t, offset, err = timeline_of(args.decode_http, args.admin_token, rid)
            ok = (error is None and r.received is True and verified.get(rid) == [] and timing is not None
                  and t is not None and t.get("succeeded"))
            row = {"tokens": tokens, "run": run, "ok": bool(ok), "received": r.received,
                   "mismatched_layers": verified.get(rid), "error": error}
            if ok:
                t0, ready_ns = timing
                add_timing(row, t0, ready_ns, [int(v) + offset for v in t["layerOnDeviceNanos"]], seen_ns[rid],
                           [blocks_for(tokens) * kv_layer_bytes] * LAYERS)
            print_run(row, run)
            if not ok:
                failures += 1
            elif run > 0:
                rows.append(row)
        result = summary(tokens, blocks_for(tokens) * kv_layer_bytes * LAYERS / 2**20, rows)
        if result:
            results.append(result)
    p_conn.send(("stop",))
    child.join(30)
    decode.shutdown()
    kv.close()
    gpu = torch.cuda.get_device_name(0) if args.device == "cuda" else "CPU smoke run, not a GPU figure"
    print_table(results, f"{gpu}, through PdConnector, pega.pd.transports={args.label}, median of {args.runs}")
    return finish(args.out, {"gpu": gpu, "label": args.label, "runs": args.runs, "driver": "connector",
                             "results": results}, failures)


if __name__ == "__main__":
    sys.exit(main())
