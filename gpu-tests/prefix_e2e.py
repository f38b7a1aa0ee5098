#!/usr/bin/env python3
"""What a vLLM worker using the reference connector's calls sees for one 10k-token Qwen3-8B prefix, end to end.

  python3 prefix_e2e.py --addr 127.0.0.1:50055 [--tokens 10000] [--runs 5] [--warmup 10] [--out prefix.json]

Qwen3-8B: 36 layers, 8 KV heads x 128, bf16, vLLM's default 16-token blocks in the kv-first (FlashAttention) layout,
each layer its own tensor of 4096 blocks. A prefix of 10,000 tokens is 625 blocks = 36 x 625 x 2 ranges of 32 KiB =
1.47 GB. Per run, with block ids scattered at random:
  save          the Save RPC of all 36 layers (the connector sends one per batch, after the forward pass)
  query         QueryPrefetch polled until all 625 blocks hit (sealing is asynchronous)
  load          Load RPC until load_state_shm turns 1, into other scattered block ids
  query + load  what the scheduler and worker wait before the prefix can be used
Every Load is compared bit for bit on the GPU. The contiguous torch copy of the same bytes is the link's ceiling.
The first run (cold: the server's first Save and Load of this instance) is reported apart; --warmup more runs follow
unmeasured, so the medians are of a server whose request path the JIT has compiled and whose pool is as full as a
serving node's (--warmup 0: the first-contact figure this script printed before).
"""

import argparse
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

from bandwidth import loaded_equal, scattered, torch_contiguous  # noqa: E402
from pega_client import CudaMem, EngineClient, Layer, LoadState, block_hash  # noqa: E402

LAYERS, NB, TOKENS_PER_BLOCK = 36, 4096, 16


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", default="127.0.0.1:50055")
    ap.add_argument("--tokens", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=10, help="unmeasured runs after the cold first one")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    torch.cuda.set_device(0)
    client = EngineClient(args.addr)
    rng = random.Random(10000)
    blocks = (args.tokens + TOKENS_PER_BLOCK - 1) // TOKENS_PER_BLOCK
    inst, ns = f"prefix-{os.getpid()}", f"prefix-ns-{os.getpid()}"
    sess = client.session(inst, ns, 1, 1)
    shape = (2, NB, TOKENS_PER_BLOCK, 8, 128)
    b = TOKENS_PER_BLOCK * 8 * 128 * 2
    layers = []
    for i in range(LAYERS):
        mem = CudaMem(torch, shape, "bfloat16", "cuda:0")
        mem.fill_random(i)
        layers.append(Layer(f"model.layers.{i}.self_attn.attn", mem, NB, b, NB * b, 2))
    client.register(inst, ns, 0, 1, 1, 0, layers)
    names = [l.name for l in layers]
    snaps = [l.mem.snapshot() for l in layers]
    nbytes = LAYERS * blocks * 2 * b
    rows, cold = [], None
    for run in range(1 + args.warmup + args.runs):
        ids = scattered(NB, blocks, rng)
        hashes = [block_hash(f"{ns}-{run}", i) for i in range(blocks)]
        t0 = time.perf_counter()
        client.save(inst, 0, 0, names, ids, hashes)
        t1 = time.perf_counter()
        hits, lease = client.query_until(inst, hashes, f"req-{run}", blocks, timeout=60)
        t2 = time.perf_counter()
        dst = scattered(NB, blocks, rng)
        st = LoadState()
        try:
            client.load(inst, 0, 0, st.name, names, [(lease, dst)])
            state = st.wait(60)
            t3 = time.perf_counter()
        finally:
            st.close()
        assert state == 1, f"load state {state}"
        torch.cuda.synchronize()
        equal = all(loaded_equal(l, s, ids, dst) for l, s in zip(layers, snaps))
        for l, s in zip(layers, snaps):
            l.mem.raw.copy_(s)
        row = {"save_ms": (t1 - t0) * 1e3, "query_ms": (t2 - t1) * 1e3, "load_ms": (t3 - t2) * 1e3,
               "query_load_ms": (t3 - t1) * 1e3, "equal": equal}
        print(f"run {run}: " + json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in row.items()}),
              flush=True)
        if run == 0:
            cold = row
        elif run > args.warmup:
            rows.append(row)
    client.unregister(inst)
    sess.cancel()
    del layers, snaps
    torch.cuda.empty_cache()
    ref = torch_contiguous(nbytes, 3)

    def med(k):
        return round(sorted(r[k] for r in rows)[len(rows) // 2], 2)

    out = {"tokens": args.tokens, "blocks": blocks, "bytes": nbytes, "runs": args.runs, "warmup": args.warmup,
           "cold_save_ms": round(cold["save_ms"], 2), "cold_query_load_ms": round(cold["query_load_ms"], 2),
           "save_ms": med("save_ms"), "query_ms": med("query_ms"), "load_ms": med("load_ms"),
           "query_load_ms": med("query_load_ms"),
           "save_GBps": round(nbytes / med("save_ms") / 1e6, 2), "load_GBps": round(nbytes / med("load_ms") / 1e6, 2),
           "torch_contiguous_d2h_ms": round(nbytes / ref["d2h"] / 1e6, 2),
           "torch_contiguous_h2d_ms": round(nbytes / ref["h2d"] / 1e6, 2),
           "all_equal": cold["equal"] and all(r["equal"] for r in rows)}
    print(json.dumps(out), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
    return 0 if out["all_equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
