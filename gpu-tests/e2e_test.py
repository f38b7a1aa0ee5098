#!/usr/bin/env python3
"""End-to-end GPU tests of pega-server's cuda backend, driven like the reference vLLM connector drives it.

  python3 e2e_test.py --addr 127.0.0.1:50055 [--kind cuda|host] [--out results.json] [--only NAME,...]

kind=cuda (default): KV caches are torch CUDA tensors registered with pickled pegaflow.ipc_wrapper.CudaIPCWrapper.
kind=host: /dev/shm objects with the host backend's descriptor (debugs this client where there is no GPU).
Each scenario prints PASS/FAIL/SKIP; the JSON lists them with details. Exit status 1 when any failed.
"""

import argparse
import base64
import json
import os
import pickle
import signal
import subprocess
import sys
import time
import traceback
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import grpc  # noqa: E402

from pega_client import EngineClient, LoadState, block_hash, make_layer, rpc_error  # noqa: E402

torch = None  # imported for kind=cuda only


def uid():
    return uuid.uuid4().hex[:8]


class Skip(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def gpu_count(kind):
    return torch.cuda.device_count() if kind == "cuda" else 2


def device(kind, i):
    return f"cuda:{i}" if kind == "cuda" else None


def load_and_wait(client, inst, tp_rank, dev, names, loads, timeout=60):
    st = LoadState()
    try:
        t0 = time.perf_counter()
        client.load(inst, tp_rank, dev, st.name, names, loads)
        state = st.wait(timeout)
        return state, time.perf_counter() - t0
    finally:
        st.close()


def load_expect_failure(client, inst, tp_rank, dev, names, loads):
    """A Load that must fail: returns (code, details, shm state)."""
    st = LoadState()
    try:
        code, details = rpc_error(client.load, inst, tp_rank, dev, st.name, names, loads)
        return code, details, st.state()
    finally:
        st.close()


def block_map(layers, src_ids, dst_ids):
    """Per layer, the (dst_off, src_off, n) ranges that a load of src blocks into dst blocks must reproduce."""
    out = []
    for layer in layers:
        ranges = []
        for s, d in zip(src_ids, dst_ids):
            for (so, n), (do, _) in zip(layer.segments(s), layer.segments(d)):
                ranges.append((do, so, n))
        out.append(ranges)
    return out


# --------------------------------------------------------------------------------------------------- scenarios


def scenario_layouts(client, kind, info):
    """Register, save scattered blocks, query, zero, load into other block ids, compare bit for bit: every layout."""
    for layout in ("kv_first", "blocks_first", "cross_layer", "mla"):
        inst, ns = f"gpu-{layout}-{uid()}", f"ns-{layout}-{uid()}"
        sess = client.session(inst, ns, 1, 1)
        if layout == "cross_layer":
            layers = [make_layer(kind, torch, "ALL_LAYERS", layout, 32, device(kind, 0), layers_in_tensor=8)]
        else:
            # 4 MiB layers for kv_first: torch's caching allocator carves several from one 20 MiB segment, so
            # several layers share one CUDA IPC allocation (the server must map it once)
            layers = [make_layer(kind, torch, f"model.layers.{i}.self_attn.attn", layout, 32, device(kind, 0))
                      for i in range(3)]
        handles = [l.mem.handle_bytes() for l in layers]
        shared = len(handles) - len(set(handles))
        client.register(inst, ns, 0, 1, 1, 0, layers)
        for i, l in enumerate(layers):
            l.mem.fill_random(1000 + i)
        snaps = [l.mem.snapshot() for l in layers]
        src = [5, 2, 9, 3, 17, 30, 11, 12]
        hashes = [block_hash(ns, i) for i in range(len(src))]
        names = [l.name for l in layers]
        t0 = time.perf_counter()
        client.save(inst, 0, 0, names, src, hashes)
        save_s = time.perf_counter() - t0
        hits, lease = client.query_until(inst, hashes, "req-" + uid(), len(src))
        check(hits == len(src) and len(lease) == 16, f"{layout}: hits {hits}")
        for l in layers:
            l.mem.zero()
        dst = [0, 1, 2, 3, 4, 5, 6, 7]
        state, load_s = load_and_wait(client, inst, 0, 0, names, [(lease, dst)])
        check(state == 1, f"{layout}: load state {state}")
        for l, snap, ranges in zip(layers, snaps, block_map(layers, src, dst)):
            check(l.mem.equal_ranges(snap, ranges), f"{layout}/{l.name}: loaded blocks differ from the saved ones")
            check(l.mem.zero_ranges([r for b in (8, 20, l.n - 1) for r in l.segments(b)]),
                  f"{layout}/{l.name}: a block that was not loaded is not zero")
        code, details, st = load_expect_failure(client, inst, 0, 0, names, [(lease, dst)])
        check(code == grpc.StatusCode.INTERNAL and "query lease is unknown or expired" in details and st < 0,
              f"{layout}: second load of a world-1 lease: {code} {details} shm {st}")
        client.unregister(inst)
        sess.cancel()
        info[layout] = {"layers": len(layers), "N": layers[0].n, "B": layers[0].b, "K": layers[0].k,
                        "G": layers[0].g, "layers_sharing_an_allocation": shared,
                        "save_ms": round(save_s * 1e3, 2), "load_ms": round(load_s * 1e3, 2)}
        for l in layers:
            if kind == "host":
                l.mem.close()
    if kind == "cuda":
        check(info["kv_first"]["layers_sharing_an_allocation"] >= 1,
              "expected kv_first layers to share a CUDA allocation (caching allocator)")


def scenario_session(client, kind, info):
    """Scheduler Session stream: closing it drops the instance, its leases and its mappings (scenario 7)."""
    inst, ns = f"gpu-session-{uid()}", f"ns-session-{uid()}"
    sess = client.session(inst, ns, 1, 1)
    layers = [make_layer(kind, torch, "layer_0", "blocks_first", 8, device(kind, 0))]
    client.register(inst, ns, 0, 1, 1, 0, layers)
    layers[0].mem.fill_random(7)
    hashes = [block_hash(ns, i) for i in range(4)]
    client.save(inst, 0, 0, ["layer_0"], [0, 1, 2, 3], hashes)
    _, lease = client.query_until(inst, hashes, "req-" + uid(), 4)
    sess.cancel()
    deadline, last = time.time() + 15, None
    while time.time() < deadline:
        try:
            client.query(inst, hashes, "req-" + uid())
        except grpc.RpcError as e:
            last = (e.code(), e.details())
            break
        time.sleep(0.05)
    check(last is not None and last[0] == grpc.StatusCode.FAILED_PRECONDITION and f"instance {inst} not found" in last[1],
          f"query after the session closed: {last}")
    code, details = rpc_error(client.save, inst, 0, 0, ["layer_0"], [0], hashes[:1])
    check(code == grpc.StatusCode.FAILED_PRECONDITION and "not found" in details, f"save: {code} {details}")
    code, details, st = load_expect_failure(client, inst, 0, 0, ["layer_0"], [(lease, [0, 1, 2, 3])])
    check(code == grpc.StatusCode.FAILED_PRECONDITION and st < 0, f"load: {code} {details} shm {st}")
    info["instance_dropped"] = True
    if kind == "host":
        layers[0].mem.close()


def scenario_errors(client, kind, info):
    """Wrong device, a hostile pickle, expandable segments: each with the reference's status code."""
    inst, ns = f"gpu-err-{uid()}", f"ns-err-{uid()}"
    layer = make_layer(kind, torch, "layer_0", "blocks_first", 8, device(kind, 0))
    if kind == "cuda":
        code, details = rpc_error(client.register, inst, ns, 0, 1, 1, 1, [layer])
        check(code == grpc.StatusCode.INTERNAL and "is pinned to device 1 but got 0" in details,
              f"wrong device: {code} {details}")
        info["wrong_device"] = details

    class Evil:
        def __reduce__(self):
            return (os.system, ("touch /tmp/pega-pwned",))

    layer.wrapper = pickle.dumps(Evil())
    code, details = rpc_error(client.register, inst, ns, 0, 1, 1, 0, [layer])
    check(code == grpc.StatusCode.INVALID_ARGUMENT and not os.path.exists("/tmp/pega-pwned"),
          f"hostile pickle: {code} {details}")
    info["hostile"] = details
    if kind != "cuda":
        return
    code = ("import sys,base64,pickle,torch;sys.path.insert(0,%r);from pegaflow.ipc_wrapper import CudaIPCWrapper;"
            "t=torch.zeros((8,2,16,8,128),dtype=torch.float16,device='cuda:0');"
            "print(base64.b64encode(pickle.dumps(CudaIPCWrapper(t))).decode(),flush=True);sys.stdin.read()") % HERE
    p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env=dict(os.environ, PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True"))
    try:
        layer.wrapper = base64.b64decode(p.stdout.readline().strip())
        code, details = rpc_error(client.register, inst, ns, 0, 1, 1, 0, [layer])
        check(code == grpc.StatusCode.INVALID_ARGUMENT and "expandable_segments" in details,
              f"expandable segments: {code} {details}")
        info["expandable"] = details
    finally:
        p.stdin.close()
        p.wait(timeout=60)


def scenario_tp2(client, kind, info, addr):
    """Scenario 8: TP=2, one worker process per GPU; a block is visible only when both ranks saved it."""
    if gpu_count(kind) < 2:
        raise Skip(f"needs 2 GPUs, {gpu_count(kind)} visible")
    inst, ns = f"gpu-tp2-{uid()}", f"ns-tp2-{uid()}"
    sess = client.session(inst, ns, 2, 2)
    workers = [Worker(addr, kind, inst, ns, r) for r in range(2)]
    try:
        for w in workers:
            w.call("register")
        hashes = [block_hash(ns, i) for i in range(4)]
        workers[0].call("save")
        time.sleep(0.5)
        kind_, hits, lease = client.query(inst, hashes, "req-" + uid())
        check(hits == 0 and lease == b"", f"after tp0 only: {hits} hits")
        workers[1].call("save")
        hits, lease = client.query_until(inst, hashes, "req-" + uid(), 4)
        for w in workers:
            w.call("zero")
        for w in workers:
            r = w.call("load " + lease.hex())
            check(r["state"] == 1 and r["equal"], f"tp{w.rank} load: {r}")
        r = workers[0].call("load_fail " + lease.hex())
        check(r["code"] == "INTERNAL" and "query lease is unknown or expired" in r["details"] and r["state"] < 0,
              f"third load: {r}")
        info["tp2"] = "both ranks restored; third load refused"
    finally:
        for w in workers:
            w.close()
        sess.cancel()


def scenario_sigkill(client, kind, info, addr):
    """A worker (that also holds the Session) is SIGKILLed: the server drops the instance and unmaps its memory."""
    if kind != "cuda":
        raise Skip("device memory accounting needs CUDA")
    free0, _ = torch.cuda.mem_get_info(0)
    inst, ns = f"gpu-kill-{uid()}", f"ns-kill-{uid()}"
    p = subprocess.Popen([sys.executable, __file__, "--addr", addr, "--role", "victim", "--instance", inst,
                          "--namespace", ns], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        line = p.stdout.readline()
        check(line.startswith("ready"), f"victim: {line!r}")
        free1, _ = torch.cuda.mem_get_info(0)
        check(free0 - free1 >= (2 << 30), f"victim allocated only {(free0 - free1) >> 20} MiB")
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
        t0 = time.time()
        free2 = free1
        while time.time() - t0 < 60:
            free2, _ = torch.cuda.mem_get_info(0)
            if free2 >= free0 - (256 << 20):
                break
            time.sleep(0.1)
        released_s = time.time() - t0
        check(free2 >= free0 - (256 << 20),
              f"device memory not returned after SIGKILL: free {free0 >> 20} -> {free1 >> 20} -> {free2 >> 20} MiB")
        code, details = rpc_error(client.query, inst, [block_hash(ns, 0)], "req-" + uid())
        check(code == grpc.StatusCode.FAILED_PRECONDITION, f"instance still there: {code} {details}")
        # the blocks it saved stay in the node-wide cache for the next instance of the namespace
        inst2 = f"gpu-kill2-{uid()}"
        l2 = [make_layer(kind, torch, "layer_0", "kv_first", 64, device(kind, 0))]
        client.register(inst2, ns, 0, 1, 1, 0, l2)
        hits, lease = client.query_until(inst2, [block_hash(ns, i) for i in range(8)], "req-" + uid(), 8)
        client.release(lease)
        client.unregister(inst2)
        info["sigkill"] = {"free_mib_before": free0 >> 20, "with_victim": free1 >> 20, "after": free2 >> 20,
                           "released_after_s": round(released_s, 2), "blocks_survive": hits}
    finally:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
            p.wait()


def scenario_duo(client, kind, info, addr):
    """Two worker processes (two instances) on GPU 0, each saving new blocks while loading its earlier ones, both
    at the same time: every loaded block equals the saved one bit for bit."""
    workers = [Worker(addr, kind, f"gpu-duo{r}-{uid()}", f"ns-duo{r}-{uid()}", r, role="duo") for r in range(2)]
    try:
        for w in workers:
            w.call("register")
        for w in workers:
            w.send("run")
        results = [w.reply("run") for w in workers]
        for w, r in zip(workers, results):
            check(r["equal_a"] and r["equal_b"], f"worker {w.rank}: {r}")
        info["duo"] = results
    finally:
        for w in workers:
            w.close()


# --------------------------------------------------------------------------------------------------- helper roles


def role_victim(args):
    """Scheduler + worker in one process, holding 2 GiB of KV cache; killed by the parent."""
    global torch
    import torch as t
    torch = t
    client = EngineClient(args.addr)
    client.session(args.instance, args.namespace, 1, 1)
    layers = [make_layer("cuda", torch, f"layer_{i}", "kv_first", 8192, "cuda:0") for i in range(4)]  # 4 x 512 MiB
    client.register(args.instance, args.namespace, 0, 1, 1, 0, layers)
    for i, l in enumerate(layers):
        l.mem.fill_random(i)
    client.save(args.instance, 0, 0, [l.name for l in layers], list(range(8)),
                [block_hash(args.namespace, i) for i in range(8)])
    print("ready", flush=True)
    time.sleep(600)


class Worker:
    """A worker process (role tp: on its own GPU; role duo: on GPU 0), driven over a line protocol."""

    def __init__(self, addr, kind, inst, ns, rank, role="tp"):
        self.rank = rank
        self.p = subprocess.Popen([sys.executable, __file__, "--addr", addr, "--role", role, "--kind", kind,
                                   "--instance", inst, "--namespace", ns, "--rank", str(rank)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def call(self, cmd):
        self.send(cmd)
        return self.reply(cmd)

    def send(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()

    def reply(self, cmd):
        line = self.p.stdout.readline()
        if not line:
            raise AssertionError(f"tp{self.rank} worker died during {cmd}")
        r = json.loads(line)
        if "error" in r:
            raise AssertionError(f"tp{self.rank} {cmd}: {r['error']}")
        return r

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()


def role_tp(args):
    global torch
    if args.kind == "cuda":
        import torch as t
        torch = t
    r = args.rank
    client = EngineClient(args.addr)
    layers = [make_layer(args.kind, torch, f"model.layers.{i}.attn", "kv_first", 16, device(args.kind, r))
              for i in range(2)]
    names = [l.name for l in layers]
    hashes = [block_hash(args.namespace, i) for i in range(4)]
    snaps = None
    for line in sys.stdin:
        cmd = line.split()
        try:
            if cmd[0] == "register":
                client.register(args.instance, args.namespace, r, 2, 2, r, layers)
                for i, l in enumerate(layers):
                    l.mem.fill_random(100 * r + i)
                snaps = [l.mem.snapshot() for l in layers]
                out = {"ok": True}
            elif cmd[0] == "save":
                client.save(args.instance, r, r, names, [3, 1, 4, 5], hashes)
                out = {"ok": True}
            elif cmd[0] == "zero":
                for l in layers:
                    l.mem.zero()
                out = {"ok": True}
            elif cmd[0] == "load":
                state, secs = load_and_wait(client, args.instance, r, r, names, [(bytes.fromhex(cmd[1]), [0, 1, 2, 3])])
                eq = all(l.mem.equal_ranges(s, rg) for l, s, rg in zip(layers, snaps,
                                                                         block_map(layers, [3, 1, 4, 5], [0, 1, 2, 3])))
                out = {"state": state, "equal": eq}
            elif cmd[0] == "load_fail":
                code, details, st = load_expect_failure(client, args.instance, r, r, names,
                                                        [(bytes.fromhex(cmd[1]), [0, 1, 2, 3])])
                out = {"code": code.name, "details": details, "state": st}
            else:
                out = {"error": f"unknown {cmd}"}
        except Exception as e:  # noqa: BLE001
            out = {"error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
    if args.kind == "host":
        for l in layers:
            l.mem.close()


def role_duo(args):
    """One of two concurrent workers: 4 kv-first layers of 256 blocks, its own instance and Session."""
    global torch
    if args.kind == "cuda":
        import torch as t
        torch = t
    import random
    import threading
    client = EngineClient(args.addr)
    sess = client.session(args.instance, args.namespace, 1, 1)
    rng = random.Random(args.rank)
    layers = [make_layer(args.kind, torch, f"model.layers.{i}.attn", "kv_first", 256, device(args.kind, 0))
              for i in range(4)]
    names = [l.name for l in layers]
    ids = rng.sample(range(256), 256)
    a, b, dst_a, dst_b = ids[0:64], ids[64:128], ids[128:192], ids[192:256]
    ha = [block_hash(args.namespace + "-a", i) for i in range(64)]
    hb = [block_hash(args.namespace + "-b", i) for i in range(64)]
    snaps = None
    for line in sys.stdin:
        cmd = line.split()
        try:
            if cmd[0] == "register":
                client.register(args.instance, args.namespace, 0, 1, 1, 0, layers)
                for i, l in enumerate(layers):
                    l.mem.fill_random(1000 * args.rank + i)
                snaps = [l.mem.snapshot() for l in layers]
                out = {"ok": True}
            elif cmd[0] == "run":
                client.save(args.instance, 0, 0, names, a, ha)
                _, lease = client.query_until(args.instance, ha, "qa", 64)
                err = []

                def save_b():
                    try:
                        client.save(args.instance, 0, 0, names, b, hb)
                    except Exception as e:  # noqa: BLE001
                        err.append(repr(e))

                th = threading.Thread(target=save_b)
                th.start()
                state_a, secs_a = load_and_wait(client, args.instance, 0, 0, names, [(lease, dst_a)])
                th.join()
                equal_a = state_a == 1 and all(l.mem.equal_ranges(s, r) for l, s, r in
                                               zip(layers, snaps, block_map(layers, a, dst_a)))
                _, lease_b = client.query_until(args.instance, hb, "qb", 64)
                state_b, _ = load_and_wait(client, args.instance, 0, 0, names, [(lease_b, dst_b)])
                equal_b = state_b == 1 and not err and all(l.mem.equal_ranges(s, r) for l, s, r in
                                                            zip(layers, snaps, block_map(layers, b, dst_b)))
                out = {"equal_a": equal_a, "equal_b": equal_b, "save_errors": err, "load_a_ms": round(secs_a * 1e3, 2)}
            else:
                out = {"error": f"unknown {cmd}"}
        except Exception as e:  # noqa: BLE001
            out = {"error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
    client.unregister(args.instance)
    sess.cancel()
    if args.kind == "host":
        for l in layers:
            l.mem.close()


# --------------------------------------------------------------------------------------------------- main


def main():
    global torch
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", default="127.0.0.1:50055")
    ap.add_argument("--kind", default="cuda", choices=["cuda", "host"])
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default="")
    ap.add_argument("--role", default="main")
    ap.add_argument("--instance")
    ap.add_argument("--namespace")
    ap.add_argument("--rank", type=int, default=0)
    args = ap.parse_args()
    if args.role == "victim":
        return role_victim(args)
    if args.role == "tp":
        return role_tp(args)
    if args.role == "duo":
        return role_duo(args)
    if args.kind == "cuda":
        import torch as t
        torch = t
        torch.cuda.init()
    client = EngineClient(args.addr)
    client.health()
    scenarios = [
        ("layouts_roundtrip_bit_for_bit", lambda i: scenario_layouts(client, args.kind, i)),
        ("session_close_drops_instance", lambda i: scenario_session(client, args.kind, i)),
        ("errors_wrong_device_hostile_expandable", lambda i: scenario_errors(client, args.kind, i)),
        ("tp2_one_worker_per_gpu", lambda i: scenario_tp2(client, args.kind, i, args.addr)),
        ("concurrent_save_load_two_workers", lambda i: scenario_duo(client, args.kind, i, args.addr)),
        ("sigkill_worker_releases_device_memory", lambda i: scenario_sigkill(client, args.kind, i, args.addr)),
    ]
    only = set(filter(None, args.only.split(",")))
    results = []
    for name, fn in scenarios:
        if only and name not in only:
            continue
        info = {}
        t0 = time.perf_counter()
        try:
            fn(info)
            status = "PASS"
        except Skip as e:
            status, info["reason"] = "SKIP", str(e)
        except Exception as e:  # noqa: BLE001
            status, info["error"] = "FAIL", f"{type(e).__name__}: {e}"
            info["trace"] = traceback.format_exc()[-3000:]
        secs = time.perf_counter() - t0
        print(f"{status} {name} ({secs:.1f}s) {json.dumps({k: v for k, v in info.items() if k != 'trace'})}",
              flush=True)
        if status == "FAIL":
            print(info["trace"], flush=True)
        results.append({"name": name, "status": status, "seconds": round(secs, 2), "info": info})
    env = {"kind": args.kind, "python": sys.version.split()[0], "grpc": grpc.__version__}
    if torch is not None:
        env.update(torch=torch.__version__, gpus=[torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())])
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"env": env, "results": results}, f, indent=1)
    return 1 if any(r["status"] == "FAIL" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main() or 0)
