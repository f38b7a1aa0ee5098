"""Restarting pega-server under a live worker (docs/operations.md "Restarting the server").

This process plays a vLLM worker that behaves like the reference connector: it registers its KV caches once (torch
CUDA tensors through CUDA IPC, or /dev/shm objects with --kind host), its scheduler opens one Session, it saves blocks
with the SSD tier on, and it never registers or opens a Session again. The script starts pega-server itself, SIGKILLs
it, starts a new one on the same pega.state.dir and SSD shard file, and then, as the connector does, polls Health and
carries on with the old instance id: QueryPrefetch (the blocks come from SSD: the RAM tier is empty after a restart),
Load into zeroed blocks, and checks every loaded byte. It prints and writes (--out) the timings:

  first start         launch -> Health OK
  SIGKILL -> Health   the kill -> the new server's Health OK (restore included)
  restore             the server's own figure (its `restore:` log line, pegaflow_restore_duration_seconds)
  first QueryPrefetch after the restart, first call -> Ready with every block (Loading polls included)
  next Load           Load RPC -> load state OK, then verified byte for byte

Usage (gpu-tests/run.sh passes these):
  python3 restart_e2e.py --server-cmd "<java> -Xmx4g -cp <cp> <main class>" [--kind cuda|host] [--backend cuda|host]
                         [--grpc-port 50055] [--http-port 9091] [--pool-size 4GB] [--layers 4] [--blocks 16]
                         [--work-dir DIR] [--log-dir DIR] [--out restart.json]
"""

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import grpc  # noqa: E402

from pega_client import EngineClient, LoadState, block_hash, make_layer  # noqa: E402

NAMESPACE = "restart-e2e"
INSTANCE = "restart-e2e-worker"


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def metric(http, series):
    """The first sample of a series (labels included in `series` when given), or None."""
    try:
        body = urllib.request.urlopen(f"http://{http}/actuator/prometheus", timeout=5).read().decode()
    except OSError:
        return None
    m = re.search(r"(?m)^" + re.escape(series) + r"(\{[^}]*\})? ([0-9.eE+-]+)$", body)
    return float(m.group(2)) if m else None


def health_ok(addr):
    """One Health call on a fresh channel: True when the server answers."""
    try:
        c = EngineClient(addr, ready_timeout=0.5)
    except grpc.FutureTimeoutError:
        return False
    try:
        c.health()
        return True
    except (grpc.RpcError, RuntimeError):
        return False
    finally:
        c.close()


class Server:
    """pega-server as a child process with the restart settings; its log goes to log_dir/restart-server-N.log."""

    def __init__(self, args, work, n):
        self.log_path = os.path.join(args.log_dir, f"restart-server-{n}.log")
        cmd = shlex.split(args.server_cmd) + [
            f"--pega.device.backend={args.backend}",
            f"--pega.pool.size={args.pool_size}",
            f"--spring.grpc.server.port={args.grpc_port}",
            f"--server.port={args.http_port}",
            "--server.address=127.0.0.1",
            "--pega.ssd.enabled=true",
            f"--pega.ssd.paths={os.path.join(work, 'ssd', 'shard.dat')}",
            f"--pega.ssd.capacity={args.ssd_capacity}",
            f"--pega.state.dir={os.path.join(work, 'state')}",
        ] + shlex.split(args.server_args)
        self.log = open(self.log_path, "w")
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)

    def await_health(self, addr, timeout):
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if health_ok(addr):
                return time.perf_counter()
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise AssertionError(f"server did not answer Health within {timeout}s (exit {self.proc.poll()}):\n"
                             + self.text()[-4000:])

    def text(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        return self.proc.returncode

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self.log.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server-cmd", required=True, help="the command that starts pega-server, before its --key=value")
    ap.add_argument("--server-args", default="", help="more --key=value for both servers")
    ap.add_argument("--kind", choices=["cuda", "host"], default="cuda")
    ap.add_argument("--backend", choices=["cuda", "host"], default=None, help="default: same as --kind")
    ap.add_argument("--grpc-port", type=int, default=50055)
    ap.add_argument("--http-port", type=int, default=9091)
    ap.add_argument("--pool-size", default="4GB")
    ap.add_argument("--ssd-capacity", default="1GB")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--blocks", type=int, default=16, help="blocks saved, then queried and loaded after the restart")
    ap.add_argument("--work-dir", default=None, help="parent of the state dir and SSD shard (default: $HOME)")
    ap.add_argument("--log-dir", default=".")
    ap.add_argument("--start-timeout", type=float, default=180)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    args.backend = args.backend or args.kind
    os.makedirs(args.log_dir, exist_ok=True)
    addr = f"127.0.0.1:{args.grpc_port}"
    http = f"127.0.0.1:{args.http_port}"
    # Not under /tmp: a state directory in a world-writable path is warned about (the journal holds IPC handles).
    work = tempfile.mkdtemp(prefix="pega-restart-e2e-", dir=args.work_dir or os.path.expanduser("~"))

    torch = None
    if args.kind == "cuda":
        import torch  # noqa: F811
        torch.cuda.init()
    info = {"kind": args.kind, "backend": args.backend, "layers": args.layers, "blocks": args.blocks,
            "pool_size": args.pool_size}
    if torch is not None:
        info["gpu"] = torch.cuda.get_device_name(0)
        info["torch"] = torch.__version__

    nb = max(2 * args.blocks, 32)
    layers = [make_layer(args.kind, torch, f"layer_{i}", "kv_first", nb, "cuda:0") for i in range(args.layers)]
    names = [l.name for l in layers]
    ids = list(range(args.blocks))
    hashes = [block_hash("restart-e2e", i) for i in ids]
    servers = []
    ok = False
    try:
        # ---- first server, the worker registers once and saves with SSD on
        first = Server(args, work, 1)
        servers.append(first)
        info["first_start_s"] = round(first.await_health(addr, args.start_timeout) - first.t0, 2)
        worker = EngineClient(addr)  # one channel for the worker and its scheduler, kept across the restart
        session = worker.session(INSTANCE, NAMESPACE, 1, 1)
        worker.register(INSTANCE, NAMESPACE, 0, 1, 1, 0, layers)
        for seed, l in enumerate(layers):
            l.mem.fill_random(1000 + seed)
        snaps = [l.mem.snapshot() for l in layers]
        worker.save(INSTANCE, 0, 0, names, ids, hashes)
        hits, lease = worker.query_until(INSTANCE, hashes, "before-kill", args.blocks)
        worker.release(lease)
        deadline = time.perf_counter() + 60
        while (metric(http, "pegaflow_ssd_write_blocks_total") or 0) < args.blocks:
            check(time.perf_counter() < deadline, "blocks did not reach the SSD tier within 60 s")
            time.sleep(0.02)

        # ---- SIGKILL; the worker stays alive with its memory and its (now dead) Session
        t_kill = time.perf_counter()
        check(first.kill() == -signal.SIGKILL, "first server did not die of SIGKILL")
        first.log.close()
        for l in layers:
            l.mem.zero()  # what the worker will load into; the tensors stay mapped by this process
        second = Server(args, work, 2)
        servers.append(second)
        t_health = second.await_health(addr, args.start_timeout)
        info["sigkill_to_health_s"] = round(t_health - t_kill, 2)
        log = second.text()
        m = re.search(r"restore: .* (\d+) instance\(s\) restored detached \[([^\]]*)\] with (\d+) layer mapping\(s\),"
                      r" (\d+) dropped \[([^\]]*)\], in ([0-9.]+) ms", log)
        check(m is not None, "no restore line in the new server's log:\n" + log[-4000:])
        check(m.group(2) == INSTANCE and int(m.group(3)) == args.layers,
              f"restore line does not name {INSTANCE} with {args.layers} layers: {m.group(0)}")
        info["restore_ms"] = float(m.group(6))
        info["restore_metric_s"] = metric(http, "pegaflow_restore_duration_seconds")
        info["restore_line"] = m.group(0)
        check(log.index("restore: ") < log.index("gRPC Server started"), "the gRPC port opened before the restore")

        # ---- the connector carries on with its old instance id: no registration, no new Session
        grpc.channel_ready_future(worker.channel).result(timeout=60)
        t0 = time.perf_counter()
        polls = 0
        while True:
            kind, hits, lease = worker.query(INSTANCE, hashes, "after-restart")
            polls += 1
            if kind == "ready":
                break
            check(time.perf_counter() - t0 < 60, "first QueryPrefetch still Loading after 60 s")
            time.sleep(0.001)
        info["first_query_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
        info["first_query_polls"] = polls
        check(hits == args.blocks, f"first QueryPrefetch after the restart hit {hits} of {args.blocks}")
        info["ssd_hits"] = metric(http, 'pegaflow_cache_tier_block_requests_total{tier="ssd"}')
        check(info["ssd_hits"] == args.blocks, f"{info['ssd_hits']} blocks answered by SSD, expected {args.blocks}")

        st = LoadState()
        try:
            t0 = time.perf_counter()
            worker.load(INSTANCE, 0, 0, st.name, names, [(lease, ids)])
            state = st.wait(60)
            info["next_load_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
        finally:
            st.close()
        check(state == 1, f"load state {state} after the restart")
        bad = []
        for l, snap in zip(layers, snaps):
            ranges = [(off, off, n) for b in ids for off, n in l.segments(b)]
            if not l.mem.equal_ranges(snap, ranges):
                bad.append(l.name)
        info["byte_exact"] = not bad
        check(not bad, f"loaded bytes differ from what was saved before the kill in {bad}")

        # A Save with the old id works too, and the instance is still detached (no Session was opened).
        worker.save(INSTANCE, 0, 0, names, list(range(args.blocks, 2 * args.blocks)),
                    [block_hash("restart-e2e-after", i) for i in ids])
        info["detached_instances"] = metric(http, "pegaflow_detached_instances")
        check(info["detached_instances"] == 1, f"detached instances {info['detached_instances']}, expected 1")
        session.cancel()
        worker.close()
        ok = True
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(work, ignore_errors=True)
        for l in layers:
            if hasattr(l.mem, "close"):
                l.mem.close()
        info["ok"] = ok
        if args.out:
            with open(args.out, "w") as f:
                json.dump(info, f, indent=2)

    print(f"restart under a live worker ({args.kind}, {args.layers} layers, {args.blocks} blocks, SSD on):")
    print(f"  first start            {info['first_start_s']} s (launch -> Health OK)")
    print(f"  SIGKILL -> Health      {info['sigkill_to_health_s']} s")
    print(f"  restore                {info['restore_ms']} ms (1 instance, {args.layers} layers)")
    print(f"  first QueryPrefetch    {info['first_query_ms']} ms ({args.blocks} blocks from SSD, "
          f"{info['first_query_polls']} calls)")
    print(f"  next Load              {info['next_load_ms']} ms, byte-exact: {info['byte_exact']}")
    print("PASS")


if __name__ == "__main__":
    main()
