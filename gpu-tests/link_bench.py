#!/usr/bin/env python3
"""Save and Load at the PCIe link as a client sees them: the Python client (grpcio) and a compiled one (LinkBench, Java,
no Python on the hot path) against the same server, the server's own time per phase, and torch's contiguous copy of
the same bytes in the same run.

  python3 link_bench.py --addr 127.0.0.1:50055 --http 127.0.0.1:9091 --java "JAVA -cp benchmarks.jar" \
      [--layouts kv16,bf16,kv128,prefix] [--runs 3] [--out link.json]

Per layout and client: 36 fresh layer tensors (Qwen3-8B shapes, as bandwidth.py; `prefix` = a 10k-token prefix of
16-token kv-first blocks, 625 of 4096), registered as a new instance, then 1 + runs runs of: Save of `count`
scattered blocks with fresh hashes, QueryPrefetch until all hit, Load into other scattered blocks until
load_state_shm turns 1. The first run after registration is the cold one (reported apart); the others give medians.
Every loaded byte is checked at the end by replaying the runs' Saves and Loads on a copy of the tensors.
The server's phase timers (pegaflow_save_phase_seconds, pegaflow_load_phase_seconds) are read around the measured
runs of each client. --kind host runs the same on /dev/shm tensors against a host-backend server (no GPU, no torch;
--shrink N divides the block counts and --layers sets the layer count, to keep it small).
"""

import argparse
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import phases  # noqa: E402
from pega_client import CudaMem, EngineClient, HostMem, Layer, LoadState, block_hash  # noqa: E402

LAYOUTS = {
    # name: (shape, blocks per request, description)
    "kv16": ((2, 2048, 16, 8, 128), 1024, "kv-first 32 KiB"),
    "bf16": ((2048, 2, 16, 8, 128), 1024, "blocks-first 64 KiB"),
    "kv128": ((2, 256, 128, 8, 128), 128, "kv-first 256 KiB"),
    "prefix": ((2, 4096, 16, 8, 128), 625, "10k-token prefix, kv-first 32 KiB"),
}


def registration(shape):
    """(N, B, K, G) as the connector computes them for a contiguous bf16 tensor."""
    if shape[0] == 2:
        n, b = shape[1], shape[2] * shape[3] * shape[4] * 2
        return n, b, n * b, 2
    return shape[0], shape[1] * shape[2] * shape[3] * shape[4] * 2, 0, 1


def scattered(n, count, rng):
    """bandwidth.py's block ids: count distinct ids of [0, n), no two neighbours in the request adjacent."""
    ids = rng.sample(range(n), count)
    for i in range(1, len(ids)):
        if abs(ids[i] - ids[i - 1]) == 1:
            j = rng.randrange(len(ids))
            ids[i], ids[j] = ids[j], ids[i]
    return ids


class Tensors:
    """The layers of one client's instance, and a copy that replays what the runs should have done to them."""

    def __init__(self, kind, shape, layers, seed):
        self.kind = kind
        self.n, self.b, self.k, self.g = registration(shape)
        self.layers = []
        for i in range(layers):
            if kind == "cuda":
                import torch
                mem = CudaMem(torch, shape, "bfloat16", "cuda:0")
            else:
                mem = HostMem(shape, "bfloat16")
            mem.fill_random(seed + i)
            self.layers.append(Layer(f"model.layers.{i}.self_attn.attn", mem, self.n, self.b, self.k, self.g))
        self.expected = [bytearray(l.mem.snapshot()) if kind == "host" else l.mem.snapshot() for l in self.layers]

    def names(self):
        return [l.name for l in self.layers]

    def replay(self, save_ids, load_ids):
        """What a Load of the blocks a Save just read does to the tensors (the Save reads the current contents)."""
        if self.kind == "cuda":
            import torch
            s = torch.tensor(save_ids, device="cuda:0")
            d = torch.tensor(load_ids, device="cuda:0")
            for e in self.expected:
                v = e.view(self.g, self.n, self.b)
                v[:, d] = v[:, s]
            return
        planes = self.g
        for e in self.expected:
            saved = [[bytes(e[p * self.n * self.b + i * self.b:p * self.n * self.b + (i + 1) * self.b])
                      for i in save_ids] for p in range(planes)]
            for p in range(planes):
                for i, dst in enumerate(load_ids):
                    off = p * self.n * self.b + dst * self.b
                    e[off:off + self.b] = saved[p][i]

    def mismatched_layers(self):
        if self.kind == "cuda":
            import torch
            torch.cuda.synchronize()
            return sum(0 if torch.equal(l.mem.raw, e) else 1 for l, e in zip(self.layers, self.expected))
        return sum(0 if l.mem.snapshot() == bytes(e) else 1 for l, e in zip(self.layers, self.expected))

    def close(self):
        for l in self.layers:
            if self.kind == "host":
                l.mem.close()
        self.layers, self.expected = [], []
        if self.kind == "cuda":
            import torch
            torch.cuda.empty_cache()


def cleanup(http):
    import urllib.request
    urllib.request.urlopen(urllib.request.Request(f"http://{http}/cache/memory/cleanup", method="POST",
                                                  headers={"X-Pega-Request": "1"}), timeout=60).read()


def med(v):
    return sorted(v)[len(v) // 2] if v else None


def query_until(client, inst, hashes, req_id, want, timeout=60.0):
    """QueryPrefetch until every block hits, polled every 0.2 ms as LinkBench does (pega_client's query_until sleeps
    10 ms between polls, which would be most of a Query+Load here); partial leases go back."""
    deadline = time.perf_counter() + timeout
    hits = 0
    while time.perf_counter() < deadline:
        kind, hits, lease = client.query(inst, hashes, req_id)
        if kind == "ready" and hits >= want:
            return lease
        if kind == "ready" and lease:
            client.release(lease)
        time.sleep(0.0002)
    raise AssertionError(f"query for {inst} reached {hits} of {want} hits in {timeout}s")


def warm_cycle(client, inst, ns, t, count, rng, cycle, queries):
    """LinkBench's warm-up cycle through grpcio: a Save of fresh hashes, QueryPrefetch until every block hit, a Load
    back into the blocks they came from (the tensors keep their bytes), then queries - 1 more queries, each lease
    released; so the server's paths are compiled before the measured runs, as in a server in service."""
    ids = scattered(t.n, count, rng)
    hashes = [block_hash(f"{ns}-warmup-{cycle}", i) for i in range(count)]
    client.save(inst, 0, 0, t.names(), ids, hashes)
    lease = query_until(client, inst, hashes, f"w-{cycle}", count)
    st = LoadState()
    try:
        client.load(inst, 0, 0, st.name, t.names(), [(lease, ids)])
        state = st.wait(60)
    finally:
        st.close()
    assert state == 1, f"warm-up load state {state}"
    for q in range(1, queries):
        client.release(query_until(client, inst, hashes, f"w-{cycle}-{q}", count))


def python_client(client, inst, ns, t, count, runs, rng, http, warmup, warm_queries):
    """bandwidth.py's Save / Query / Load loop through grpcio, with LinkBench's warm-up cycles between the cold first
    run and the measured ones; returns per-run times (ms), the phase breakdown of the measured runs and that of the
    cold first run."""
    rows, cold, cold_after, before = [], phases.scrape(http), None, None
    for run in range(runs + 1):
        if run == 1:
            cold_after = phases.scrape(http)
            for cycle in range(warmup):
                warm_cycle(client, inst, ns, t, count, rng, cycle, warm_queries)
            before = phases.scrape(http)
        ids = scattered(t.n, count, rng)
        hashes = [block_hash(f"{ns}-{run}", i) for i in range(count)]
        t0 = time.perf_counter()
        client.save(inst, 0, 0, t.names(), ids, hashes)
        t1 = time.perf_counter()
        lease = query_until(client, inst, hashes, f"r-{run}", count)
        t2 = time.perf_counter()
        dst = scattered(t.n, count, rng)
        st = LoadState()
        try:
            client.load(inst, 0, 0, st.name, t.names(), [(lease, dst)])
            state = st.wait(60)
            t3 = time.perf_counter()
        finally:
            st.close()
        assert state == 1, f"load state {state}"
        t.replay(ids, dst)
        rows.append({"save_ms": (t1 - t0) * 1e3, "query_ms": (t2 - t1) * 1e3, "load_ms": (t3 - t2) * 1e3})
    if cold_after is None:  # no measured runs
        cold_after = before = phases.scrape(http)
    return rows, phases.breakdown(before, phases.scrape(http)), phases.breakdown(cold, cold_after)


def java_client(java, addr, http, inst, t, count, runs, seed, write_buffer, warmup, warm_queries):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        cmd = shlex.split(java) + ["io.pegaflow.bench.link.LinkBench", "--addr", addr, "--http", http,
                                   "--instance", inst, "--layers", ",".join(t.names()), "--blocks", str(t.n),
                                   "--count", str(count), "--runs", str(runs), "--seed", str(seed), "--out", out,
                                   "--write-buffer", str(write_buffer), "--warmup", str(warmup),
                                   "--warm-queries", str(warm_queries)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            raise RuntimeError(f"LinkBench exited {p.returncode}: {p.stderr[-2000:]}{p.stdout[-2000:]}")
        with open(out) as f:
            report = json.load(f)
    finally:
        os.unlink(out)
    for r in report["runs"]:
        t.replay(r["save_ids"], r["load_ids"])
    rows = [{k: r[k] for k in ("save_ms", "send_ms", "query_ms", "load_ms", "build_ms")} for r in report["runs"]]
    before = phases.parse(report["metrics_before"])
    return (rows, phases.breakdown(before, phases.parse(report["metrics_after"])),
            phases.breakdown(phases.parse(report["metrics_cold"]), phases.parse(report["metrics_cold_after"])))


def one(args, key, who, client, rng):
    shape, count, desc = LAYOUTS[key]
    if args.kv_heads or args.head_dim:  # same request shape (ranges, hashes), smaller ranges: the server's CPU side
        shape = shape[:-2] + (args.kv_heads or shape[-2], args.head_dim or shape[-1])
    if args.shrink > 1:
        shape = tuple(d // args.shrink if d in (2048, 4096, 256) else d for d in shape)
        count = max(2, count // args.shrink)
    t = Tensors(args.kind, shape, args.layers, 100)
    inst, ns = f"link-{key}-{who}-{os.getpid()}", f"link-ns-{key}-{who}-{os.getpid()}"
    sess = client.session(inst, ns, 1, 1)
    try:
        client.register(inst, ns, 0, 1, 1, 0, t.layers)
        if who == "python":
            rows, b, cold = python_client(client, inst, ns, t, count, args.runs, rng, args.http, args.warmup,
                                          args.warm_queries)
        else:
            rows, b, cold = java_client(args.java, args.addr, args.http, inst, t, count, args.runs, rng.randrange(1 << 30),
                                          args.java_write_buffer, args.warmup, args.warm_queries)
        bad = t.mismatched_layers()
        client.unregister(inst)
        cleanup(args.http)  # the next client starts from an empty pool, so no Save of it pays for eviction
    finally:
        sess.cancel()
        nbytes = args.layers * count * t.g * t.b
        t.close()
    measured = rows[1:]
    out = {"layout": key, "description": desc, "client": who, "bytes": nbytes, "ranges": args.layers * count * 2 if
           shape[0] == 2 else args.layers * count, "cold_save_ms": round(rows[0]["save_ms"], 3),
           "layers_mismatched": bad, "phases": b, "cold_phases": cold}
    for k in ("save_ms", "query_ms", "load_ms"):
        out[k] = round(med([r[k] for r in measured]), 3)
    out["query_load_ms"] = round(med([r["query_ms"] + r["load_ms"] for r in measured]), 3)
    if "send_ms" in measured[0]:  # the compiled client's own serialising and handing over of the Save request
        out["send_ms"] = round(med([r["send_ms"] for r in measured]), 3)
    print(json.dumps({k: v for k, v in out.items() if k not in ("phases", "cold_phases")}), flush=True)
    return out


def gbps(nbytes, ms):
    return round(nbytes / ms / 1e6, 2) if ms else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", default="127.0.0.1:50055")
    ap.add_argument("--http", default="127.0.0.1:9091")
    ap.add_argument("--java", required=True, help="the command that runs a class of pega-benchmarks' jar")
    ap.add_argument("--layouts", default="kv16,bf16,kv128,prefix")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--kind", choices=("cuda", "host"), default="cuda")
    ap.add_argument("--layers", type=int, default=36)
    ap.add_argument("--shrink", type=int, default=1)
    ap.add_argument("--kv-heads", type=int, default=0, help="instead of 8: smaller ranges, the same counts")
    ap.add_argument("--head-dim", type=int, default=0, help="instead of 128")
    ap.add_argument("--clients", default="python,java")
    ap.add_argument("--java-write-buffer", type=int, default=0,
                    help="the compiled client's socket send buffer and Netty write-buffer mark in bytes (0: Netty's)")
    ap.add_argument("--warmup", type=int, default=10,
                    help="unmeasured Save, Query and Load cycles per client between its cold first run and the measured"
                         " ones (the compiled client also sends warmup x warm-queries query misses before the cold run)")
    ap.add_argument("--warm-queries", type=int, default=200, help="QueryPrefetch calls per warm-up cycle")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    client = EngineClient(args.addr)
    rng = random.Random(20261206)
    gpu, results, refs = "none (host backend)", [], {}
    if args.kind == "cuda":
        import torch
        from bandwidth import torch_contiguous
        torch.cuda.set_device(0)
        gpu = torch.cuda.get_device_name(0)
    for key in [k for k in args.layouts.split(",") if k]:
        for who in args.clients.split(","):
            results.append(one(args, key, who, client, rng))
        nbytes = results[-1]["bytes"]
        refs[key] = torch_contiguous(nbytes, 3) if args.kind == "cuda" else None
    lines = [f"GPU: {gpu}; {args.layers} layers, scattered block ids, median of {args.runs} runs after a cold first one"
             f" and {args.warmup} warm-up cycles of a Save, {args.warm_queries} queries and a Load per client"
             "; GB/s = 1e9 B/s; ratio = to torch's contiguous copy of the same bytes in this run. Save = the Save RPC,"
             " Load = Load until load_state_shm is 1, Q+L = QueryPrefetch until every block hit, then the Load;"
             " server Save / copy = pegaflow_rpc_duration{method=save} and the save phase `copy`, engine load copy ="
             " the load phase `copy` (the server's own clocks, over the same runs).", "",
             "| layout | client | GB | Save GB/s | ratio | Load GB/s | ratio | Q+L ms | cold first Save ms (x copy) |"
             " server Save GB/s | engine save copy GB/s | engine load copy GB/s | torch D2H / H2D | bytes wrong |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        ref = refs.get(r["layout"]) or {}
        b = r["phases"] or {}
        d2h, h2d = ref.get("d2h"), ref.get("h2d")
        sv, ld = gbps(r["bytes"], r["save_ms"]), gbps(r["bytes"], r["load_ms"])
        copy_ms = r["bytes"] / d2h / 1e6 if d2h else None
        r.update({"save_GBps": sv, "load_GBps": ld, "torch_d2h_GBps": d2h, "torch_h2d_GBps": h2d,
                  "save_ratio": round(sv / d2h, 3) if d2h else None, "load_ratio": round(ld / h2d, 3) if h2d else None,
                  "cold_save_x_copy": round(r["cold_save_ms"] / copy_ms, 2) if copy_ms else None,
                  "server_save_GBps": gbps(r["bytes"], b.get("save_rpc_ms")),
                  "engine_save_copy_GBps": gbps(r["bytes"], (b.get("save") or {}).get("copy")),
                  "engine_load_copy_GBps": gbps(r["bytes"], (b.get("load") or {}).get("copy"))})
        lines.append(f"| {r['description']} | {r['client']} | {r['bytes'] / 1e9:.2f} | {sv} | {r['save_ratio'] or '-'} | "
                     f"{ld} | {r['load_ratio'] or '-'} | {r['query_load_ms']} | {r['cold_save_ms']} "
                     f"({r['cold_save_x_copy'] or '-'}) | {r['server_save_GBps']} | {r['engine_save_copy_GBps']} | "
                     f"{r['engine_load_copy_GBps']} | {d2h or '-'} / {h2d or '-'} | {r['layers_mismatched']} |")
    lines += ["", "A Save as the client sees it against the server's own clock (medians and means of the measured runs,"
              " ms): client = the Save RPC the client timed; server RPC = pegaflow_rpc_duration{method=save}, from the"
              " call's headers to its reply; client only = client - server RPC; send = the compiled client serialising"
              " and handing over the request, before the server sees the headers; handler = server RPC - receive, from"
              " the request's delivery to the reply; copy = the save phase `copy`.", "",
              "| layout | client | client Save | server RPC | client only | send | server receive | handler |"
              " RPC / copy | handler / copy |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        b = r["phases"] or {}
        rpc = b.get("save_rpc_ms")
        receive = (b.get("save") or {}).get("receive")
        copy = (b.get("save") or {}).get("copy")
        handler = round(rpc - receive, 3) if rpc is not None and receive is not None else None
        r.update({"save_handler_ms": handler,
                  "save_rpc_x_copy": round(rpc / copy, 3) if rpc and copy else None,
                  "save_handler_x_copy": round(handler / copy, 3) if handler and copy else None})
        lines.append(f"| {r['layout']} | {r['client']} | {r['save_ms']} | {rpc if rpc is not None else '-'} | "
                     f"{round(r['save_ms'] - rpc, 3) if rpc is not None else '-'} | {r.get('send_ms', '-')} | "
                     f"{receive if receive is not None else '-'} | {handler if handler is not None else '-'} | "
                     f"{r['save_rpc_x_copy'] or '-'} | {r['save_handler_x_copy'] or '-'} |")
    lines += ["", "Server phases (mean ms per request over the measured runs):", "",
              phases.table([(f"{r['layout']} {r['client']}", r["phases"]) for r in results]),
              "", "Server phases of the cold first Save and Load (one request each, right after registration):", "",
              phases.table([(f"{r['layout']} {r['client']}", r["cold_phases"]) for r in results])]
    print("\n".join(lines), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"gpu": gpu, "layers": args.layers, "runs": args.runs, "results": results,
                       "table": "\n".join(lines)}, f, indent=1)
    return 1 if any(r["layers_mismatched"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
