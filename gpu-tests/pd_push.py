"""P/D layer push between two pega-servers, two torch workers on one GPU (started by gpu-tests/pd_push.sh).

Qwen3-8B-shaped KV cache: 36 layers, FlashAttention layout (2, NB, 16, 8, 128) bf16 per layer, TP 1. Per token count
and run:

  decode worker   PrepareReceive(its blocks, a load_state object) -> handshake, via this process, to prefill
  prefill worker  StartPush(handshake, its blocks, layer-ready object, push_state); then the synthetic forward pass:
                  per layer one matmul of the layer's weight FLOPs (tokens x 4096 @ 4096 x 47104, about a Qwen3-8B
                  layer's 193M parameters), then the layer's KV written into its blocks, a CUDA event; a helper thread
                  waits for each event in order and marks the layer ready (LayerReady.mark_ready), timestamping it
  decode worker   waits for load_state = 1 (timestamped), then checks every pushed byte against the prefill source
  this process    GET /pd on the decode server: the receive's per-layer on-device times (python/pegaflow_jvm_push/
                  timeline.py turns them into the figures; clock offset measured, both are CLOCK_MONOTONIC)

Prints per token count the medians over RUNS (after one warm-up): added latency = last layer ready -> decode worker's
completion signal; forward = forward start -> last layer ready; overlap (bytes) = share of the KV on the decode
device when the last layer became ready; overlap (time) = share of the time some ready layer was in transit that fell
inside the forward pass. Exits 1 if any run failed or a byte differs.
"""

import argparse
import json
import multiprocessing as mp
import os
import pickle
import queue
import random
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

from pegaflow_jvm_push.timeline import clock_offset, find_timeline  # noqa: E402
from pd_report import add_timing, finish, print_run, print_table, summary  # noqa: E402

LAYERS, BLOCK, KV_HEADS, HEAD = 36, 16, 8, 128
BLOCK_BYTES = BLOCK * KV_HEADS * HEAD * 2  # one K (or V) segment of a block, bf16
HIDDEN, LAYER_COLS = 4096, 47104  # 4096 x 47104 = 193M: a Qwen3-8B decoder layer's weights (attention + MLP)


def blocks_for(tokens):
    return (tokens + BLOCK - 1) // BLOCK


def layer_names():
    return [f"model.layers.{i}.self_attn.attn" for i in range(LAYERS)]


def alloc_kv(torch, nb):
    """36 KV tensors as vLLM allocates them, and their registration (wrapper bytes as the connector pickles them)."""
    from pegaflow.ipc_wrapper import CudaIPCWrapper
    from pegaflow_jvm_push import kv_layer

    tensors, layers = [], []
    for name in layer_names():
        t = torch.zeros((2, nb, BLOCK, KV_HEADS, HEAD), dtype=torch.bfloat16, device="cuda:0")
        tensors.append(t)
        layers.append(kv_layer(name, pickle.dumps(CudaIPCWrapper(t)), nb, BLOCK_BYTES, nb * BLOCK_BYTES, 2))
    return tensors, layers


def source(torch, seed, layer, blocks):
    """What the forward pass writes into layer `layer`'s blocks: random bits, the same in both processes."""
    g = torch.Generator(device="cuda:0")
    g.manual_seed(seed * 1000 + layer)
    raw = torch.randint(-32768, 32768, (2, blocks, BLOCK, KV_HEADS, HEAD), dtype=torch.int32, device="cuda:0",
                        generator=g)
    return raw.to(torch.int16).view(torch.bfloat16)


def block_ids(seed, nb, blocks, side):
    """Scattered, unordered block ids as a vLLM block table has them; prefill and decode differ."""
    return random.Random(f"{seed}-{side}").sample(range(nb), blocks)


def decode_worker(conn, args, nb):
    import torch
    from pegaflow_jvm_push import PushClient, PushServerGone, PushTimeout, StateObject

    torch.cuda.set_device(0)
    tensors, layers = alloc_kv(torch, nb)
    client = PushClient(args.decode)
    client.register_layers("pd-decode", 0, 1, 0, layers)
    conn.send(("ready", None))
    while True:
        msg = conn.recv()
        if msg[0] == "stop":
            break
        _, tokens, seed = msg
        blocks = blocks_for(tokens)
        dst = block_ids(seed, nb, blocks, "decode")
        for t in tensors:
            t.zero_()
        torch.cuda.synchronize()
        with StateObject() as state:
            r = client.prepare_receive("pd-decode", f"d-{tokens}-{seed}", dst, [state], timeout_s=args.timeout)
            conn.send(("prepared", r.handshake, r.receive_id))
            try:
                verdict = client.wait(state, args.timeout, poll_s=0.00005)
            except (PushTimeout, PushServerGone) as e:
                verdict = f"{type(e).__name__}: {e}"
            done_ns = time.monotonic_ns()
        mismatched = None
        if verdict == 1:
            idx = torch.tensor(dst, dtype=torch.long, device="cuda:0")
            mismatched = [l for l in range(LAYERS)
                          if not torch.equal(tensors[l].index_select(1, idx).view(torch.int16),
                                             source(torch, seed, l, blocks).view(torch.int16))]
        conn.send(("done", verdict, done_ns, mismatched))
    client.close()


def prefill_worker(conn, args, nb, max_tokens):
    import torch
    from pegaflow_jvm_push import LayerReady, PushClient, StateObject

    torch.cuda.set_device(0)
    tensors, layers = alloc_kv(torch, nb)
    client = PushClient(args.prefill)
    client.register_layers("pd-prefill", 0, 1, 0, layers)
    g = torch.Generator(device="cuda:0")
    g.manual_seed(7)
    x = torch.randn((max_tokens, HIDDEN), dtype=torch.bfloat16, device="cuda:0", generator=g)
    w = torch.randn((HIDDEN, LAYER_COLS), dtype=torch.bfloat16, device="cuda:0", generator=g) * 0.01
    y = torch.empty((max_tokens, LAYER_COLS), dtype=torch.bfloat16, device="cuda:0")
    conn.send(("ready", None))
    while True:
        msg = conn.recv()
        if msg[0] == "stop":
            break
        _, tokens, seed, handshake = msg
        blocks = blocks_for(tokens)
        src_ids = block_ids(seed, nb, blocks, "prefill")
        idx = torch.tensor(src_ids, dtype=torch.long, device="cuda:0")
        srcs = [source(torch, seed, l, blocks) for l in range(LAYERS)]
        torch.cuda.synchronize()
        ready_ns = [0] * LAYERS
        with LayerReady(LAYERS) as ready, StateObject() as push_state:
            client.start_push("pd-prefill", 0, f"p-{tokens}-{seed}", handshake, src_ids, ready, push_state,
                              timeout_s=args.timeout)
            events = queue.Queue()

            def marker():
                # waits for each layer's event in order, as a connector's save_kv_layer helper thread would
                for l in range(LAYERS):
                    ev = events.get()
                    ev.synchronize()
                    ready.mark_ready(l + 1)
                    ready_ns[l] = time.monotonic_ns()

            th = threading.Thread(target=marker, daemon=True)
            th.start()
            torch.cuda.synchronize()
            t0 = time.monotonic_ns()
            for l in range(LAYERS):
                torch.mm(x[:tokens], w, out=y[:tokens])  # the layer's compute
                tensors[l].index_copy_(1, idx, srcs[l])  # its attention writes the layer's KV
                ev = torch.cuda.Event()
                ev.record()
                events.put(ev)
            th.join(args.timeout)
            try:
                pushed = push_state.wait(args.timeout)
            except Exception as e:  # noqa: BLE001 - reported, the run counts as failed
                pushed = f"{type(e).__name__}: {e}"
        del srcs
        conn.send(("done", t0, ready_ns, pushed))
    client.close()


def fetch_view(http, token):
    req = urllib.request.Request(f"http://{http}/pd", headers={"Authorization": f"Bearer {token}"})
    before = time.monotonic_ns()
    with urllib.request.urlopen(req, timeout=10) as r:
        view = json.load(r)
    after = time.monotonic_ns()
    return view, clock_offset(before, int(view["clockNanos"]), after)


def timeline_of(http, token, request_id, deadline_s=10.0):
    # the server records the timeline just after it wrote the load_state object: look again briefly
    end = time.monotonic() + deadline_s
    while True:
        view, (offset, err) = fetch_view(http, token)
        t = find_timeline(view, request_id)
        if t is not None or time.monotonic() > end:
            return t, offset, err
        time.sleep(0.01)


def expect(conn, kind, timeout):
    if not conn.poll(timeout):
        raise TimeoutError(f"no '{kind}' from a worker within {timeout} s")
    msg = conn.recv()
    if msg[0] != kind:
        raise RuntimeError(f"expected '{kind}', got {msg!r}")
    return msg


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
    args = ap.parse_args()
    token_counts = [int(t) for t in args.tokens.split(",") if t.strip()]
    max_tokens = max(token_counts)
    nb = blocks_for(max_tokens) + 64
    ctx = mp.get_context("spawn")
    p_conn, p_child = ctx.Pipe()
    d_conn, d_child = ctx.Pipe()
    workers = [ctx.Process(target=prefill_worker, args=(p_child, args, nb, max_tokens), daemon=True),
               ctx.Process(target=decode_worker, args=(d_child, args, nb), daemon=True)]
    for w in workers:
        w.start()
    expect(p_conn, "ready", 300)
    expect(d_conn, "ready", 300)
    kv_layer_bytes = 2 * BLOCK_BYTES
    results, failures = [], 0
    print(f"PDPUSH label={args.label} layers={LAYERS} block={BLOCK} kv_heads={KV_HEADS} head={HEAD} bf16 nb={nb}",
          flush=True)
    for tokens in token_counts:
        blocks = blocks_for(tokens)
        rows = []
        for run in range(args.runs + 1):
            seed = tokens * 100 + run
            d_conn.send(("prepare", tokens, seed))
            _, handshake, _receive_id = expect(d_conn, "prepared", 60)
            p_conn.send(("push", tokens, seed, handshake))
            _, t0, ready_ns, pushed = expect(p_conn, "done", args.timeout + 60)
            _, verdict, done_ns, mismatched = expect(d_conn, "done", args.timeout + 60)
            t, offset, err = timeline_of(args.decode_http, args.admin_token, f"d-{tokens}-{seed}")
            ok = verdict == 1 and pushed == 1 and mismatched == [] and t is not None and t.get("succeeded")
            row = {"tokens": tokens, "run": run, "ok": bool(ok), "verdict": verdict, "push_state": pushed,
                   "mismatched_layers": mismatched, "clock_offset_ns": offset, "clock_uncertainty_ns": err}
            if ok:
                add_timing(row, t0, ready_ns, [int(v) + offset for v in t["layerOnDeviceNanos"]], done_ns,
                           [blocks * kv_layer_bytes] * LAYERS)
            print_run(row, run)
            if not ok:
                failures += 1
            elif run > 0:
                rows.append(row)
        result = summary(tokens, blocks * kv_layer_bytes * LAYERS / 2**20, rows)
        if result:
            results.append(result)
    for c in (p_conn, d_conn):
        c.send(("stop",))
    for w in workers:
        w.join(30)
    import torch

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "?"
    print_table(results, f"{gpu}, pega.pd.transports={args.label}, median of {args.runs}")
    return finish(args.out, {"gpu": gpu, "label": args.label, "runs": args.runs, "results": results}, failures)


if __name__ == "__main__":
    sys.exit(main())
