#!/usr/bin/env python3
"""Save (device -> pool) and Load (pool -> device) throughput through pega-server, against torch's own pinned copies
of the same bytes in the same run.

  python3 bandwidth.py --addr 127.0.0.1:50055 [--out bandwidth.json] [--batch-gib 1] [--runs 3]

For each block size (64 KiB, 256 KiB, 2 MiB): one 2 GiB KV tensor (blocks-first, uint8, registered as ALL_LAYERS
like the connector's cross-layer mode), batches of `--batch-gib` GiB of scattered block ids (random, no two adjacent,
so nothing coalesces on the device side). Times:
  save    the Save RPC, which returns after the D2H copy landed in the pool (includes gRPC and pool allocation)
  load    from sending Load until load_state_shm turns 1 (the H2D copy, signalled by the server)
  torch   the same blocks with torch: one non_blocking copy_ per block between the device tensor and one pinned
          buffer on one stream, then one synchronize; and one contiguous copy of the whole batch (the link ceiling)
  both    Save of one batch while Load of another runs, vs torch D2H and H2D on two streams at once
GB/s = 1e9 bytes per second.
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

from pega_client import EngineClient, Layer, LoadState, block_hash  # noqa: E402

GIB = 1 << 30


class TensorMem:
    def __init__(self, t):
        self.t = t

    def wrapper(self):
        import pickle
        from pegaflow.ipc_wrapper import CudaIPCWrapper
        return pickle.dumps(CudaIPCWrapper(self.t))


def scattered_ids(nblocks, count, rng):
    """`count` distinct block ids out of `nblocks`, in random order, so no two consecutive ones are adjacent."""
    ids = rng.sample(range(nblocks), count)
    for i in range(1, len(ids)):
        if abs(ids[i] - ids[i - 1]) == 1:
            j = rng.randrange(len(ids))
            ids[i], ids[j] = ids[j], ids[i]
    return ids


def torch_blockwise(dev, pinned, ids, bs, to_host, stream):
    """torch's own copy of the same blocks: one copy_ per block, all on one stream, one synchronize."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with torch.cuda.stream(stream):
        for i, b in enumerate(ids):
            if to_host:
                pinned[i].copy_(dev[b], non_blocking=True)
            else:
                dev[b].copy_(pinned[i], non_blocking=True)
    stream.synchronize()
    return time.perf_counter() - t0


def torch_contiguous(dev_flat, pinned_flat, to_host, stream):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with torch.cuda.stream(stream):
        if to_host:
            pinned_flat.copy_(dev_flat, non_blocking=True)
        else:
            dev_flat.copy_(pinned_flat, non_blocking=True)
    stream.synchronize()
    return time.perf_counter() - t0


def torch_bidirectional(dev_a, pin_a, dev_b, pin_b):
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with torch.cuda.stream(s1):
        pin_a.copy_(dev_a, non_blocking=True)
    with torch.cuda.stream(s2):
        dev_b.copy_(pin_b, non_blocking=True)
    s1.synchronize()
    s2.synchronize()
    return time.perf_counter() - t0


def server_metrics(http):
    """(save_sum_s, save_count, load_sum_s, load_count) from the server's Prometheus text, or None."""
    import urllib.request
    try:
        text = urllib.request.urlopen(f"http://{http}/metrics", timeout=5).read().decode()
    except Exception:  # noqa: BLE001
        return None
    vals = {}
    for line in text.splitlines():
        for key in ("pegaflow_save_duration_seconds_sum", "pegaflow_save_duration_seconds_count",
                    "pegaflow_load_duration_seconds_sum", "pegaflow_load_duration_seconds_count"):
            if line.startswith(key):
                vals[key] = vals.get(key, 0.0) + float(line.split()[-1])
        # The whole Save RPC as the server saw it (parse to reply), to split client/transport time from engine time.
        if line.startswith("pegaflow_rpc_duration_seconds_sum") and 'method="save"' in line and 'status="ok"' in line:
            server_metrics.rpc_save = float(line.split()[-1])
    if len(vals) < 4:
        return None
    return (vals["pegaflow_save_duration_seconds_sum"], vals["pegaflow_save_duration_seconds_count"],
            vals["pegaflow_load_duration_seconds_sum"], vals["pegaflow_load_duration_seconds_count"])


def gbps(nbytes, secs):
    return round(nbytes / secs / 1e9, 2)


def med(v):
    return sorted(v)[len(v) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", default="127.0.0.1:50055")
    ap.add_argument("--out", default=None)
    ap.add_argument("--http", default="127.0.0.1:9091")
    ap.add_argument("--batch-gib", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sizes", default="65536,262144,2097152")
    args = ap.parse_args()
    torch.cuda.set_device(0)
    client = EngineClient(args.addr)
    rng = random.Random(20261130)
    batch = int(args.batch_gib * GIB)
    results = []
    stream = torch.cuda.Stream()
    pinned_flat = torch.empty(batch, dtype=torch.uint8, pin_memory=True)
    pinned_flat2 = torch.empty(batch, dtype=torch.uint8, pin_memory=True)
    for bs in [int(x) for x in args.sizes.split(",")]:
        nblocks = 2 * batch // bs
        count = batch // bs
        dev = torch.empty((nblocks, bs), dtype=torch.uint8, device="cuda:0")
        dev.random_(0, 256)
        inst, ns = f"bw-{bs}-{os.getpid()}", f"bw-ns-{bs}-{os.getpid()}"
        sess = client.session(inst, ns, 1, 1)
        layer = Layer("ALL_LAYERS", TensorMem(dev), nblocks, bs, 0, 1)
        client.register(inst, ns, 0, 1, 1, 0, [layer])
        pinned = pinned_flat.view(count, bs)
        row = {"block_bytes": bs, "blocks_per_batch": count, "batch_bytes": batch}
        saves, loads, t_d2h, t_h2d, t_d2h_1, t_h2d_1 = [], [], [], [], [], []
        srv_save, srv_load, rpc_save = [], [], []
        for run in range(args.runs + 1):  # the first run warms up
            ids = scattered_ids(nblocks, count, rng)
            hashes = [block_hash(f"{ns}-{run}", i) for i in range(count)]
            m0 = server_metrics(args.http)
            rpc_before = getattr(server_metrics, "rpc_save", 0.0)
            t0 = time.perf_counter()
            client.save(inst, 0, 0, ["ALL_LAYERS"], ids, hashes)
            ts = time.perf_counter() - t0
            hits, lease = client.query_until(inst, hashes, f"r-{run}", count, timeout=60)
            dst = scattered_ids(nblocks, count, rng)
            st = LoadState()
            try:
                t0 = time.perf_counter()
                client.load(inst, 0, 0, st.name, ["ALL_LAYERS"], [(lease, dst)])
                state = st.wait(60)
                tl = time.perf_counter() - t0
            finally:
                st.close()
            assert state == 1, f"load state {state}"
            m1 = server_metrics(args.http)
            if m0 and m1 and run > 0 and m1[1] > m0[1] and m1[3] > m0[3]:
                srv_save.append((m1[0] - m0[0]) / (m1[1] - m0[1]))
                rpc_save.append(getattr(server_metrics, "rpc_save", 0.0) - rpc_before)
                srv_load.append((m1[2] - m0[2]) / (m1[3] - m0[3]))
            print(f"  bs {bs} run {run}: save {gbps(batch, ts)} GB/s, load {gbps(batch, tl)} GB/s", flush=True)
            a = torch_blockwise(dev, pinned, ids, bs, True, stream)
            b = torch_blockwise(dev, pinned, dst, bs, False, stream)
            c = torch_contiguous(dev.view(-1)[:batch], pinned_flat, True, stream)
            d = torch_contiguous(dev.view(-1)[:batch], pinned_flat, False, stream)
            if run > 0:
                saves.append(ts)
                loads.append(tl)
                t_d2h.append(a)
                t_h2d.append(b)
                t_d2h_1.append(c)
                t_h2d_1.append(d)
        row.update({
            "save_GBps": gbps(batch, med(saves)), "save_best_GBps": gbps(batch, min(saves)),
            "load_GBps": gbps(batch, med(loads)), "load_best_GBps": gbps(batch, min(loads)),
            "torch_blockwise_d2h_GBps": gbps(batch, med(t_d2h)), "torch_blockwise_h2d_GBps": gbps(batch, med(t_h2d)),
            "torch_contiguous_d2h_GBps": gbps(batch, med(t_d2h_1)),
            "torch_contiguous_h2d_GBps": gbps(batch, med(t_h2d_1)),
        })
        if srv_save:
            # inside the engine: Save from validation to the sealing hand-off; Load from dequeue to the copy's end
            row["server_save_GBps"] = gbps(batch, med(srv_save))
            if rpc_save and med(rpc_save) > 0:
                row["server_rpc_save_GBps"] = gbps(batch, med(rpc_save))
            row["server_load_GBps"] = gbps(batch, med(srv_load))
        row["save_vs_torch_blockwise"] = round(row["save_GBps"] / row["torch_blockwise_d2h_GBps"], 3)
        row["load_vs_torch_blockwise"] = round(row["load_GBps"] / row["torch_blockwise_h2d_GBps"], 3)
        row["save_vs_torch_contiguous"] = round(row["save_GBps"] / row["torch_contiguous_d2h_GBps"], 3)
        row["load_vs_torch_contiguous"] = round(row["load_GBps"] / row["torch_contiguous_h2d_GBps"], 3)

        # both directions at once: Save a fresh batch while Loading a saved one
        both, tb = [], []
        for run in range(args.runs):
            ids = scattered_ids(nblocks, count, rng)
            hashes = [block_hash(f"{ns}-both-{run}", i) for i in range(count)]
            hits, lease = client.query_until(inst, [block_hash(f"{ns}-{run + 1}", i) for i in range(count)],
                                             f"rb-{run}", count, timeout=60)
            dst = scattered_ids(nblocks, count, rng)
            st = LoadState()
            err = []

            def do_save():
                try:
                    client.save(inst, 0, 0, ["ALL_LAYERS"], ids, hashes)
                except Exception as e:  # noqa: BLE001
                    err.append(e)

            th = threading.Thread(target=do_save)
            t0 = time.perf_counter()
            client.load(inst, 0, 0, st.name, ["ALL_LAYERS"], [(lease, dst)])
            th.start()
            state = st.wait(60)
            th.join()
            both.append(time.perf_counter() - t0)
            st.close()
            assert state == 1 and not err, f"both: state {state} {err}"
            tb.append(torch_bidirectional(dev.view(-1)[:batch], pinned_flat, dev.view(-1)[batch:2 * batch],
                                          pinned_flat2))
        row["both_aggregate_GBps"] = gbps(2 * batch, med(both))
        row["torch_two_stream_aggregate_GBps"] = gbps(2 * batch, med(tb))
        results.append(row)
        print(json.dumps(row), flush=True)
        client.unregister(inst)
        sess.cancel()
        del dev
        torch.cuda.empty_cache()
    out = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "results": results}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
