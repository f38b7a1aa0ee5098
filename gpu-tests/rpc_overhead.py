#!/usr/bin/env python3
"""Where the time of a Save goes between the Python client and the server's handler.

  python3 rpc_overhead.py --addr 127.0.0.1:50055 --http 127.0.0.1:9091 [--out rpc_overhead.json]

Times, each as the client sees it and as the server's own histogram (pegaflow_rpc_duration_seconds, handler entry
to reply) sees it, so the difference is transport plus client:
  health      an empty RPC, the floor of one round trip through grpcio (back to back, after 20 ms idle, and after a
              metrics scrape), beside the same against a grpcio server in another process
  save_1      a Save of one 2 MiB block
  save_batch  a Save of 512 random 2 MiB blocks (1 GiB), built with protobuf as the connector does
  save_raw    the same batch sent as pre-serialized bytes, so Python's protobuf work is outside the timing
  load_batch  a Query and Load of the last batch saved, from sending Load until load_state_shm turns 1
Around the batches it prints the server's own breakdown of a Save and a Load by phase (pegaflow_save_phase_seconds,
pegaflow_load_phase_seconds: receive, parse, decode, validate, index or lease, allocate, plan, copy, seal, reply).
"""

import argparse
import json
import os
import random
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import phases  # noqa: E402
from pega_client import CudaMem, EngineClient, HostMem, Layer, LoadState, block_hash  # noqa: E402
from pega_proto import engine_pb2 as pb  # noqa: E402

BS = 2 << 20
SETTLE = 0.02


def rpc_sum(http, method):
    text = urllib.request.urlopen(f"http://{http}/metrics", timeout=5).read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith("pegaflow_rpc_duration_seconds_sum") and f'method="{method}"' in line:
            total += float(line.split()[-1])
    return total


def pct(v, p):
    s = sorted(v)
    return s[min(len(s) - 1, int(p * len(s)))]


def timed(http, method, fn, n):
    """(client seconds, server seconds) per call, medians over n calls, metrics read once around each call."""
    client, server = [], []
    for _ in range(n):
        before = rpc_sum(http, method)
        time.sleep(SETTLE)  # the scrape leaves work behind on the server (GC, connection handling)
        t0 = time.perf_counter()
        fn()
        client.append(time.perf_counter() - t0)
        server.append(rpc_sum(http, method) - before)
    return client, server


def row(name, client, server, nbytes=0):
    c, s = pct(client, 0.5), pct(server, 0.5)
    r = {"case": name, "calls": len(client), "client_ms_p50": round(c * 1e3, 3), "client_ms_p90": round(pct(client, 0.9) * 1e3, 3),
         "server_ms_p50": round(s * 1e3, 3), "outside_handler_ms_p50": round((c - s) * 1e3, 3)}
    if nbytes:
        r["client_GBps"] = round(nbytes / c / 1e9, 2)
        if s > 0:  # a Load's handler answers before its copy: its time is not the server's share
            r["server_GBps"] = round(nbytes / s / 1e9, 2)
    print(json.dumps(r), flush=True)
    return r


ECHO_SERVER = """
import grpc, sys, time
from concurrent import futures
srv = grpc.server(futures.ThreadPoolExecutor(4))
srv.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(
    "echo.Echo", {"Call": grpc.unary_unary_rpc_method_handler(lambda req, ctx: b"")})])
print(srv.add_insecure_port("127.0.0.1:0"), flush=True)
srv.start()
time.sleep(3600)
"""


def round_trips(call, n, idle):
    out = []
    for _ in range(n):
        if idle:
            time.sleep(idle)
        t0 = time.perf_counter()
        call()
        out.append(time.perf_counter() - t0)
    return out


def python_floor():
    """The same round trips against a grpcio server in another process: the client's and the machine's share."""
    import subprocess
    import grpc
    proc = subprocess.Popen([sys.executable, "-c", ECHO_SERVER], stdout=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        call = channel.unary_unary("/echo.Echo/Call")
        call(b"")
        rows = [row("python_server_back_to_back", round_trips(lambda: call(b""), 300, 0), [0.0] * 300),
                row("python_server_after_20ms_idle", round_trips(lambda: call(b""), 100, SETTLE), [0.0] * 100)]
        channel.close()
        return rows
    finally:
        proc.kill()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", default="127.0.0.1:50055")
    ap.add_argument("--http", default="127.0.0.1:9091")
    ap.add_argument("--out", default=None)
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--batch-mib", type=int, default=1024)
    ap.add_argument("--kind", choices=("cuda", "host"), default="cuda", help="host: a /dev/shm tensor, no GPU")
    args = ap.parse_args()
    client = EngineClient(args.addr)
    rng = random.Random(7)
    count = (args.batch_mib << 20) // BS
    nblocks = 2 * count
    if args.kind == "cuda":
        import torch
        torch.cuda.set_device(0)
        mem, gpu = CudaMem(torch, (nblocks, BS), "uint8", "cuda:0"), torch.cuda.get_device_name(0)
        mem.fill_random(7)
    else:
        mem, gpu = HostMem((nblocks, BS), "uint8"), "none (host backend)"
    inst, ns = f"ovh-{os.getpid()}", f"ovh-ns-{os.getpid()}"
    sess = client.session(inst, ns, 1, 1)
    client.register(inst, ns, 0, 1, 1, 0, [Layer("ALL_LAYERS", mem, nblocks, BS, 0, 1)])
    raw_save = client.channel.unary_unary("/pegaflow.Engine/Save", request_serializer=None,
                                          response_deserializer=pb.SaveResponse.FromString)
    results = []

    results.append(row("health_back_to_back", round_trips(client.health, 300, 0), [0.0] * 300))
    results.append(row("health_after_20ms_idle", round_trips(client.health, 100, SETTLE), [0.0] * 100))
    results += python_floor()
    results.append(row("health", *timed(args.http, "health", client.health, 100)))

    serial = iter(range(10 ** 9))

    def save_one():
        client.save(inst, 0, 0, ["ALL_LAYERS"], [rng.randrange(nblocks)], [block_hash(f"{ns}-one", next(serial))])

    results.append(row("save_1", *timed(args.http, "save", save_one, 100), BS))

    def batch():
        ids = rng.sample(range(nblocks), count)
        return ids, [block_hash(f"{ns}-b", next(serial)) for _ in range(count)]

    pending = []

    def save_batch():
        ids, hashes = pending.pop()
        client.save(inst, 0, 0, ["ALL_LAYERS"], ids, hashes)

    def save_raw():
        resp = raw_save(pending.pop())
        assert resp.status.ok, resp

    def raw_batch():
        ids, hashes = batch()
        layer = pb.SaveLayer(layer_name="ALL_LAYERS", block_ids=ids, block_hashes=hashes)
        return pb.SaveRequest(instance_id=inst, saves=[layer]).SerializeToString()

    last = {}

    def save_batch_kept():
        ids, hashes = pending[-1]
        last["hashes"] = hashes
        save_batch()

    breakdowns = []
    for name, fn, prepare in (("save_batch", save_batch_kept, batch), ("save_raw", save_raw, raw_batch)):
        client_t, server_t, load_t, before = [], [], [], None
        for run in range(args.runs + 1):
            pending.append(prepare())
            if run == 1:  # the first run warms up, the phases cover the others
                before = phases.scrape(args.http)
            c, s = timed(args.http, "save", fn, 1)
            if name == "save_batch":  # Query + Load of what this run saved
                _, lease = client.query_until(inst, last["hashes"], f"ovh-{run}", count, timeout=60)
                st = LoadState()
                try:
                    t0 = time.perf_counter()
                    client.load(inst, 0, 0, st.name, ["ALL_LAYERS"], [(lease, rng.sample(range(nblocks), count))])
                    state = st.wait(60)
                    tl = time.perf_counter() - t0
                finally:
                    st.close()
                assert state == 1, f"load state {state}"
            if run > 0:  # the first one warms up
                client_t += c
                server_t += s
                if name == "save_batch":
                    load_t.append(tl)
        results.append(row(name, client_t, server_t, count * BS))
        if load_t:
            results.append(row("load_batch", load_t, [0.0] * len(load_t), count * BS))
        after = phases.scrape(args.http)
        b = phases.breakdown(before, after) if before else None
        if b:
            b["case"] = name
            breakdowns.append((name, b))
            print(json.dumps(b), flush=True)
        # Drop the blocks again so the pool never evicts under the measurement.
        urllib.request.urlopen(urllib.request.Request(f"http://{args.http}/cache/memory/cleanup", method="POST",
                                               headers={"X-Pega-Request": "1"}),
                               timeout=30).read()

    sess.cancel()
    if args.kind == "host":
        mem.close()  # the /dev/shm object outlives the process otherwise
    if breakdowns:
        print(f"\nServer phases, {count} blocks of {BS >> 20} MiB, one layer (mean ms per request):\n", flush=True)
        print(phases.table(breakdowns), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"gpu": gpu, "results": results, "phases": [b for _, b in breakdowns]}, f, indent=1)


if __name__ == "__main__":
    main()
