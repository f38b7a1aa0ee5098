#!/usr/bin/env python3
"""Save (device -> pool) and Load (pool -> device) throughput through pega-server for Qwen3-8B-shaped KV caches,
against torch's contiguous pinned copy of the same bytes in the same run.

  python3 bandwidth.py --addr 127.0.0.1:50055 [--out bandwidth.json] [--runs 3] [--layouts kv16,bf16,kv128,kv1024]

Layouts (36 layers, 8 KV heads x 128, bf16; each layer its own tensor, registered like the connector does):
  kv16    kv-first (2, 2048, 16, 8, 128): 32 KiB per K or V range, Save/Load 1024 blocks = 2.25 GiB
  bf16    blocks-first (2048, 2, 16, 8, 128): 64 KiB per block range, 1024 blocks
  kv128   kv-first (2, 256, 128, 8, 128): 256 KiB ranges, 128 blocks
  kv1024  kv-first (2, 32, 1024, 8, 128): 2 MiB ranges, 16 blocks
Block ids are scattered at random over twice the blocks saved (nothing coalesces), Loads go to other scattered ids.
Times, median of runs after one warm-up:
  save    the Save RPC, which returns after the copy landed in the pool
  load    from sending Load until load_state_shm turns 1
  both    a Save of fresh blocks while a Load runs, aggregate
  torch   one contiguous copy_ of the same number of bytes between a device tensor and pinned memory, each way, and
          both ways on two streams at once: the link's ceiling in this run
GB/s = 1e9 bytes per second. With --verify (default on) every Load is compared bit for bit on the GPU.
"""

import argparse
import json
import os
import random
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

from pega_client import CudaMem, EngineClient, Layer, LoadState, block_hash  # noqa: E402

LAYERS = 36
LAYOUTS = {
    # name: (shape, blocks per request, segments per block (2 = K and V apart), description)
    "kv16": ((2, 2048, 16, 8, 128), 1024, "kv-first, 16-token blocks (32 KiB ranges)"),
    "bf16": ((2048, 2, 16, 8, 128), 1024, "blocks-first, 16-token blocks (64 KiB ranges)"),
    "kv128": ((2, 256, 128, 8, 128), 128, "kv-first, 128-token blocks (256 KiB ranges)"),
    "kv1024": ((2, 32, 1024, 8, 128), 16, "kv-first, 1024-token blocks (2 MiB ranges)"),
}


def registration(shape):
    """(N, B, K, G) as the connector computes them for a contiguous bf16 tensor."""
    elem = 2
    if shape[0] == 2:  # kv-first
        n = shape[1]
        b = shape[2] * shape[3] * shape[4] * elem
        return n, b, n * b, 2
    n = shape[0]
    return n, shape[1] * shape[2] * shape[3] * shape[4] * elem, 0, 1


def scattered(n, count, rng):
    ids = rng.sample(range(n), count)
    for i in range(1, len(ids)):
        if abs(ids[i] - ids[i - 1]) == 1:
            j = rng.randrange(len(ids))
            ids[i], ids[j] = ids[j], ids[i]
    return ids


def server_metrics(http):
    """Sums of the server's own durations (seconds) and counts: engine save/load, whole Save RPC; None if absent."""
    import urllib.request
    try:
        text = urllib.request.urlopen(f"http://{http}/actuator/prometheus", timeout=5).read().decode()
    except Exception:  # noqa: BLE001
        try:
            text = urllib.request.urlopen(f"http://{http}/metrics", timeout=5).read().decode()
        except Exception:  # noqa: BLE001
            return None
    vals = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        for key in ("pegaflow_save_duration_seconds_sum", "pegaflow_save_duration_seconds_count",
                    "pegaflow_load_duration_seconds_sum", "pegaflow_load_duration_seconds_count"):
            if line.startswith(key):
                vals[key] = vals.get(key, 0.0) + float(line.split()[-1])
        if line.startswith("pegaflow_rpc_duration_seconds_sum") and 'method="save"' in line:
            vals["rpc_save_sum"] = vals.get("rpc_save_sum", 0.0) + float(line.split()[-1])
        if line.startswith("pegaflow_rpc_duration_seconds_count") and 'method="save"' in line:
            vals["rpc_save_count"] = vals.get("rpc_save_count", 0.0) + float(line.split()[-1])
    return vals if len(vals) >= 4 else None


def delta_ms(m0, m1, key):
    """Mean duration in ms of what a metric recorded between two scrapes."""
    if not m0 or not m1:
        return None
    s, c = key + "_sum", key + "_count"
    if key == "rpc_save":
        s, c = "rpc_save_sum", "rpc_save_count"
    dc = m1.get(c, 0) - m0.get(c, 0)
    return (m1.get(s, 0) - m0.get(s, 0)) / dc * 1e3 if dc > 0 else None


def gbps(nbytes, secs):
    return round(nbytes / secs / 1e9, 2)


def med(v):
    return sorted(v)[len(v) // 2]


def torch_contiguous(nbytes, runs):
    dev = torch.empty(nbytes, dtype=torch.uint8, device="cuda:0")
    dev2 = torch.empty(nbytes, dtype=torch.uint8, device="cuda:0")
    pin = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    pin2 = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()

    def one(fn):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        s1.synchronize()
        s2.synchronize()
        return time.perf_counter() - t0

    def d2h():
        with torch.cuda.stream(s1):
            pin.copy_(dev, non_blocking=True)

    def h2d():
        with torch.cuda.stream(s1):
            dev.copy_(pin, non_blocking=True)

    def both():
        with torch.cuda.stream(s1):
            pin.copy_(dev, non_blocking=True)
        with torch.cuda.stream(s2):
            dev2.copy_(pin2, non_blocking=True)

    out = {}
    for name, fn, mult in (("d2h", d2h, 1), ("h2d", h2d, 1), ("both", both, 2)):
        one(fn)
        out[name] = gbps(mult * nbytes, med([one(fn) for _ in range(runs)]))
    del dev, dev2, pin, pin2
    torch.cuda.empty_cache()
    return out


def loaded_equal(layer, snap, src_ids, dst_ids):
    """Blocks dst_ids of the layer equal blocks src_ids of its snapshot (every plane), compared on the GPU at once."""
    shape = (layer.g, layer.n, layer.b) if layer.g == 2 else (1, layer.n, layer.b)
    dev = torch.device("cuda:0")
    d = torch.tensor(dst_ids, device=dev)
    s = torch.tensor(src_ids, device=dev)
    return torch.equal(layer.mem.raw.view(shape)[:, d], snap.view(shape)[:, s])


def run_layout(client, key, runs, verify, rng, http):
    shape, count, desc = LAYOUTS[key]
    n, b, k, g = registration(shape)
    inst, ns = f"bw-{key}-{os.getpid()}", f"bw-ns-{key}-{os.getpid()}"
    sess = client.session(inst, ns, 1, 1)
    layers = []
    for i in range(LAYERS):
        mem = CudaMem(torch, shape, "bfloat16", "cuda:0")
        mem.fill_random(100 + i)
        layers.append(Layer(f"model.layers.{i}.self_attn.attn", mem, n, b, k, g))
    client.register(inst, ns, 0, 1, 1, 0, layers)
    names = [l.name for l in layers]
    nbytes = LAYERS * count * g * b
    snaps = [l.mem.snapshot() for l in layers] if verify else None
    saves, loads, boths, mismatches = [], [], [], 0
    engine_save, engine_load, rpc_save = [], [], []
    ids_by_run = {}
    for run in range(runs + 1):
        ids = scattered(n, count, rng)
        hashes = [block_hash(f"{ns}-{run}", i) for i in range(count)]
        m0 = server_metrics(http)
        t0 = time.perf_counter()
        client.save(inst, 0, 0, names, ids, hashes)
        ts = time.perf_counter() - t0
        ids_by_run[run] = (ids, hashes)
        _, lease = client.query_until(inst, hashes, f"r-{run}", count, timeout=60)
        dst = scattered(n, count, rng)
        st = LoadState()
        try:
            t0 = time.perf_counter()
            client.load(inst, 0, 0, st.name, names, [(lease, dst)])
            state = st.wait(60)
            tl = time.perf_counter() - t0
        finally:
            st.close()
        assert state == 1, f"{key}: load state {state}"
        m1 = server_metrics(http)
        if run > 0:
            for acc, k in ((engine_save, "pegaflow_save_duration_seconds"), (engine_load, "pegaflow_load_duration_seconds"),
                           (rpc_save, "rpc_save")):
                v = delta_ms(m0, m1, k)
                if v is not None:
                    acc.append(v)
        if verify:
            torch.cuda.synchronize()
            for l, snap in zip(layers, snaps):
                if not loaded_equal(l, snap, ids, dst):
                    mismatches += 1
            for l, snap in zip(layers, snaps):  # restore what the load overwrote
                l.mem.raw.copy_(snap)
        if run > 0:
            saves.append(ts)
            loads.append(tl)
        print(f"  {key} run {run}: save {gbps(nbytes, ts)} GB/s, load {gbps(nbytes, tl)} GB/s", flush=True)
    for run in range(runs):
        ids = scattered(n, count, rng)
        hashes = [block_hash(f"{ns}-both-{run}", i) for i in range(count)]
        old_ids, old_hashes = ids_by_run[run + 1]
        _, lease = client.query_until(inst, old_hashes, f"rb-{run}", count, timeout=60)
        dst = scattered(n, count, rng)
        st = LoadState()
        err = []

        def do_save():
            try:
                client.save(inst, 0, 0, names, ids, hashes)
            except Exception as e:  # noqa: BLE001
                err.append(e)

        th = threading.Thread(target=do_save)
        t0 = time.perf_counter()
        client.load(inst, 0, 0, st.name, names, [(lease, dst)])
        th.start()
        state = st.wait(60)
        th.join()
        boths.append(time.perf_counter() - t0)
        st.close()
        assert state == 1 and not err, f"{key} both: state {state} {err}"
    client.unregister(inst)
    sess.cancel()
    del layers, snaps
    torch.cuda.empty_cache()
    ref = torch_contiguous(nbytes, runs)
    row = {"layout": key, "description": desc, "ranges_per_request": LAYERS * count * g, "range_bytes": b,
           "bytes": nbytes, "save_GBps": gbps(nbytes, med(saves)), "load_GBps": gbps(nbytes, med(loads)),
           "both_GBps": gbps(2 * nbytes, med(boths)), "torch_d2h_GBps": ref["d2h"], "torch_h2d_GBps": ref["h2d"],
           "torch_both_GBps": ref["both"], "load_mismatches": mismatches}
    for name, acc in (("engine_save", engine_save), ("engine_load", engine_load), ("rpc_save", rpc_save)):
        if acc:
            row[name + "_GBps"] = gbps(nbytes, med(acc) / 1e3)
    row["save_ratio"] = round(row["save_GBps"] / ref["d2h"], 3)
    row["load_ratio"] = round(row["load_GBps"] / ref["h2d"], 3)
    row["both_ratio"] = round(row["both_GBps"] / ref["both"], 3)
    print(json.dumps(row), flush=True)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", default="127.0.0.1:50055")
    ap.add_argument("--http", default="127.0.0.1:9091")
    ap.add_argument("--out", default=None)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--layouts", default="kv16,bf16,kv128,kv1024")
    ap.add_argument("--no-verify", action="store_true")
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    torch.cuda.set_device(0)
    client = EngineClient(args.addr)
    rng = random.Random(20261201)
    results = [run_layout(client, k, args.runs, not args.no_verify, rng, args.http)
               for k in args.layouts.split(",") if k]
    out = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "label": args.label, "results": results}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
    return 1 if any(r["load_mismatches"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
