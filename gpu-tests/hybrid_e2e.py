#!/usr/bin/env python3
"""A hybrid model's worker (attention plus recurrent state, e.g. the Qwen3.5/3.6 and Kimi-Linear families) as a
pegaflow-llm 0.23.11+ connector drives pega-server: byte-exact round trip of both cache groups, then Save/Load
throughput per group.

  python3 hybrid_e2e.py --addr 127.0.0.1:50055 [--kind cuda|host] [--out hybrid.json] [--runs 3] [--small]

The worker registers like today's connector: client_version 0.25.1, no num_layers, layer_group_ids (attention layers
in storage group 0, state layers in group 1). Its tensors are laid out as vLLM's hybrid KV cache manager sizes them:
  attention  kv-first (2, NB, 16, 8, 128) bf16 per layer: two 32 KiB ranges per block (K and V planes)
  state      one page per block (NB, PAGE) per layer: a GDN layer's conv state (3 x 8192 bf16 = 48 KiB) and SSM state
             (16 heads x 128 x 128 bf16 = 512 KiB) back to back, 560 KiB per block, another size than attention's
The connector saves attention for every block and state only at checkpoints (every CHECKPOINT_EVERY-th block, into
state blocks of their own), queries group 0 as a prefix and group 1 as a membership query (hit_positions), and loads
both groups in one grouped Load. Everything loaded is compared with what was saved, on the GPU.

Throughput (GB/s = 1e9 bytes per second; median of --runs after one warm-up):
  save   the Save RPC of one request holding the attention blocks and the checkpoints
  load   from sending the grouped Load until load_state_shm turns 1
"""

import argparse
import json
import os
import statistics
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from pega_client import CudaMem, EngineClient, HostMem, Layer, LoadState, block_hash, contiguous_stride  # noqa: E402

ATTENTION_LAYERS = 12
STATE_LAYERS = 36  # 3 of 4 layers of a Qwen3.5-style stack are linear attention
BLOCKS = 128  # attention blocks per request
NB = 2 * BLOCKS  # blocks per tensor: saved from the first half, loaded into the second
CHECKPOINT_EVERY = 16  # one state checkpoint per 16 blocks (256 tokens)
CONV_BYTES = 3 * 8192 * 2
SSM_BYTES = 16 * 128 * 128 * 2
STATE_PAGE = CONV_BYTES + SSM_BYTES


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def memory(kind, torch, shape, device):
    return CudaMem(torch, shape, "bfloat16", device) if kind == "cuda" else HostMem(shape, "bfloat16")


def attention_layer(kind, torch, i, device):
    shape = (2, NB, 16, 8, 128)
    stride = contiguous_stride(shape)
    return Layer(f"model.layers.{4 * i + 3}.self_attn", memory(kind, torch, shape, device), NB, stride[1] * 2,
                 stride[0] * 2, 2)


def state_layer(kind, torch, i, device):
    shape = (NB, STATE_PAGE // 2)
    return Layer(f"model.layers.{4 * (i // 3) + i % 3}.linear_attn", memory(kind, torch, shape, device), NB,
                 STATE_PAGE, 0, 1)


def query_until(client, inst, hashes, req, group, want, timeout=60.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        kind, hits, lease, positions = client.query_group(inst, hashes, req, group)
        if kind == "ready" and hits >= want:
            return hits, lease, positions
        if kind == "ready" and lease:
            client.release(lease)
        time.sleep(0.01)
    raise AssertionError(f"group {group} of {inst} did not reach {want} hits in {timeout}s")


def load_both(client, inst, dev, attn, state, attn_lease, attn_dst, state_lease, state_dst, timeout=60.0):
    ls = LoadState()
    try:
        t0 = time.perf_counter()
        client.load_groups(inst, 0, dev, ls.name, [[l.name for l in attn], [l.name for l in state]], [
            (attn_lease, [attn_dst, [None] * len(attn_dst)]),
            (state_lease, [[None] * len(state_dst), state_dst]),
        ])
        s = ls.wait(timeout)
        elapsed = time.perf_counter() - t0
        check(s == 1, f"load state {s}")
        return elapsed
    finally:
        ls.close()


def ranges(layers, src, dst):
    """(dst_off, src_off, n) of every block segment, per layer."""
    out = []
    for layer in layers:
        rs = []
        for s, d in zip(src, dst):
            for (so, n), (do, _) in zip(layer.segments(s), layer.segments(d)):
                rs.append((do, so, n))
        out.append(rs)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", default="127.0.0.1:50055")
    ap.add_argument("--kind", default="cuda", choices=["cuda", "host"])
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--small", action="store_true", help="2 + 2 layers, 32 blocks, 64 KiB state pages (host checks)")
    args = ap.parse_args()
    global ATTENTION_LAYERS, STATE_LAYERS, BLOCKS, NB, STATE_PAGE
    if args.small:
        ATTENTION_LAYERS, STATE_LAYERS, BLOCKS, STATE_PAGE = 2, 2, 32, 64 * 1024
        NB = 2 * BLOCKS

    torch = None
    device = None
    if args.kind == "cuda":
        import torch as _torch
        torch = _torch
        device = f"cuda:{args.device}"
    client = EngineClient(args.addr)
    inst = "hybrid-" + uuid.uuid4().hex[:8]
    ns = "hybrid-ns-" + uuid.uuid4().hex[:8]
    attn = [attention_layer(args.kind, torch, i, device) for i in range(ATTENTION_LAYERS)]
    state = [state_layer(args.kind, torch, i, device) for i in range(STATE_LAYERS)]
    layers = attn + state
    client.register_groups(inst, ns, 0, 1, 1, args.device, layers, [0] * len(attn) + [1] * len(state))
    session = client.session(inst, ns, 1, 1)
    results = {"attention_layers": ATTENTION_LAYERS, "state_layers": STATE_LAYERS, "blocks": BLOCKS,
               "checkpoints": BLOCKS // CHECKPOINT_EVERY, "state_page_bytes": STATE_PAGE, "runs": []}
    try:
        for run in range(args.runs + 1):
            for layer in layers:
                layer.mem.fill_random(1000 * run + hash(layer.name) % 1000)
            hashes = [block_hash(f"{inst}-{run}", i) for i in range(BLOCKS)]
            src = list(range(BLOCKS))  # attention blocks 0..127, loaded into 128..255
            dst = list(range(BLOCKS, 2 * BLOCKS))
            positions = list(range(CHECKPOINT_EVERY - 1, BLOCKS, CHECKPOINT_EVERY))
            state_src = list(range(len(positions)))  # checkpoints from state blocks 0..7, loaded into 128..135
            state_dst = [BLOCKS + i for i in state_src]
            snaps = [layer.mem.snapshot() for layer in layers]
            attn_bytes = BLOCKS * sum(layer.b * layer.g for layer in attn)
            state_bytes = len(positions) * sum(layer.b for layer in state)

            t0 = time.perf_counter()
            client.save_sets(inst, 0, args.device, [
                ([l.name for l in attn], src, hashes),
                ([l.name for l in state], state_src, [hashes[p] for p in positions]),
            ])
            save_s = time.perf_counter() - t0

            hits, attn_lease, none = query_until(client, inst, hashes, f"a{run}", 0, BLOCKS)
            check(hits == BLOCKS and not none, f"group 0: {hits} hits, positions {none}")
            hits, state_lease, got = query_until(client, inst, hashes, f"s{run}", 1, len(positions))
            check(got == positions, f"group 1 positions {got}, expected {positions}")
            load_s = load_both(client, inst, args.device, attn, state, attn_lease, dst, state_lease, state_dst)

            for layer, snap, rs in zip(attn, snaps, ranges(attn, src, dst)):
                check(layer.mem.equal_ranges(snap, rs), f"{layer.name}: attention bytes differ after the load")
            for layer, snap, rs in zip(state, snaps[len(attn):], ranges(state, state_src, state_dst)):
                check(layer.mem.equal_ranges(snap, rs), f"{layer.name}: state bytes differ after the load")
            if run > 0:  # the first run warms up
                results["runs"].append({"save_s": save_s, "load_s": load_s, "attention_bytes": attn_bytes,
                                        "state_bytes": state_bytes})
            print(f"run {run}: {attn_bytes + state_bytes} bytes, save {save_s * 1e3:.1f} ms,"
                  f" load {load_s * 1e3:.1f} ms, byte-exact", flush=True)
    finally:
        try:
            client.unregister(inst)  # before the Session ends, whose end drops the instance too
        finally:
            session.cancel()
            if args.kind == "host":
                for layer in layers:
                    layer.mem.close()

    total = results["runs"][0]["attention_bytes"] + results["runs"][0]["state_bytes"] if results["runs"] else 0
    save = statistics.median(r["save_s"] for r in results["runs"]) if results["runs"] else float("nan")
    load = statistics.median(r["load_s"] for r in results["runs"]) if results["runs"] else float("nan")
    results["save_gbps"] = total / save / 1e9
    results["load_gbps"] = total / load / 1e9
    print()
    print("| request | bytes | Save GB/s | Load GB/s |")
    print("|---|---:|---:|---:|")
    print(f"| {BLOCKS} attention blocks x {ATTENTION_LAYERS} layers + {BLOCKS // CHECKPOINT_EVERY} checkpoints x"
          f" {STATE_LAYERS} state layers | {total} | {results['save_gbps']:.2f} | {results['load_gbps']:.2f} |")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
