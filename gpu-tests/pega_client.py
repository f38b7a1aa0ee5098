"""What the reference vLLM connector does on the wire, in plain Python: the gRPC calls of its worker and scheduler
roles (novitalabs/pegaflow v0.22.4, python/pegaflow/connector/), the 32-byte load_state_shm, and the KV-cache
layouts with their (N, B, K, G) registration.

Two kinds of "device memory" share one code path:
  cuda  torch CUDA tensors, registered by pickling pegaflow.ipc_wrapper.CudaIPCWrapper exactly as the connector does
  host  /dev/shm objects with the host backend's JSON descriptor (to debug this client on a machine without a GPU)
"""

import json
import mmap
import os
import pickle
import struct
import threading
import time
import uuid

import grpc

from pega_proto import engine_pb2 as pb
from pega_proto import load_wire_pb2 as lw

MAX_MSG = 64 * 1024 * 1024


# --------------------------------------------------------------------------------------------------- gRPC


class EngineClient:
    """One channel, as the connector's EngineRpcClient: 64 MiB messages, keepalive PING every 30 s."""

    def __init__(self, addr, ready_timeout=30):
        self.addr = addr
        self.channel = grpc.insecure_channel(addr, options=[
            ("grpc.max_send_message_length", MAX_MSG),
            ("grpc.max_receive_message_length", MAX_MSG),
            ("grpc.keepalive_time_ms", 30000),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.max_pings_without_data", 0),
        ])
        grpc.channel_ready_future(self.channel).result(timeout=ready_timeout)

        def unary(name, req, resp):
            return self.channel.unary_unary(f"/pegaflow.Engine/{name}", request_serializer=req.SerializeToString,
                                            response_deserializer=resp.FromString)

        self._register = unary("RegisterContextBatch", pb.RegisterContextRequest, pb.RegisterContextResponse)
        self._save = unary("Save", pb.SaveRequest, pb.SaveResponse)
        self._load = unary("Load", pb.LoadRequest, pb.LoadResponse)
        # pegaflow-llm 0.23.7+ sends Load with layer groups and per-group targets on the same method
        self._load_groups = unary("Load", lw.GroupedLoadRequest, pb.LoadResponse)
        self._query = unary("QueryPrefetch", pb.QueryRequest, pb.QueryResponse)
        self._release = unary("Release", pb.ReleaseRequest, pb.ReleaseResponse)
        self._unregister = unary("UnregisterContext", pb.UnregisterRequest, pb.UnregisterResponse)
        self._health = unary("Health", pb.HealthRequest, pb.HealthResponse)
        self._session = self.channel.unary_stream("/pegaflow.Engine/Session",
                                                  request_serializer=pb.SessionRequest.SerializeToString,
                                                  response_deserializer=pb.SessionEvent.FromString)

    def close(self):
        self.channel.close()

    @staticmethod
    def _ok(resp, what):
        if not resp.HasField("status"):
            raise RuntimeError(f"{what} response missing status")  # what the Rust client raises
        if not resp.status.ok:
            raise RuntimeError(f"{what}: ok=false {resp.status.message}")
        return resp

    def register(self, instance_id, namespace, tp_rank, tp_size, world_size, device_id, layers, num_layers=None,
                 pp_rank=0):
        """layers: list of Layer (name, wrapper_bytes, N, B, K, G)."""
        req = pb.RegisterContextRequest(
            instance_id=instance_id, namespace=namespace, tp_rank=tp_rank, tp_size=tp_size, world_size=world_size,
            device_id=device_id, num_layers=num_layers or len(layers), pp_rank=pp_rank,
            layer_names=[l.name for l in layers], wrapper_bytes=[l.wrapper for l in layers],
            num_blocks=[l.n for l in layers], bytes_per_block=[l.b for l in layers],
            kv_stride_bytes=[l.k for l in layers], segments=[l.g for l in layers])
        return self._ok(self._register(req), "register_context_batch")

    def register_groups(self, instance_id, namespace, tp_rank, tp_size, world_size, device_id, layers, groups,
                        client_version="0.25.1", pp_rank=0):
        """As a pegaflow-llm 0.23.11+ connector registers: its version, no num_layers, each layer's storage group
        (layer_group_ids: attention 0, each recurrent-state group 1, 2, ...)."""
        req = pb.RegisterContextRequest(
            instance_id=instance_id, namespace=namespace, tp_rank=tp_rank, tp_size=tp_size, world_size=world_size,
            device_id=device_id, pp_rank=pp_rank, client_version=client_version,
            layer_names=[l.name for l in layers], wrapper_bytes=[l.wrapper for l in layers],
            num_blocks=[l.n for l in layers], bytes_per_block=[l.b for l in layers],
            kv_stride_bytes=[l.k for l in layers], segments=[l.g for l in layers], layer_group_ids=groups)
        return self._ok(self._register(req), "register_context_batch")

    def save_sets(self, instance_id, tp_rank, device_id, sets, pp_rank=0):
        """sets: list of (layer names, block ids, block hashes); a hybrid connector saves attention for every block
        and state only at checkpoints, in one request."""
        saves = [pb.SaveLayer(layer_name=n, block_ids=ids, block_hashes=hashes) for names, ids, hashes in sets
                 for n in names]
        return self._ok(self._save(pb.SaveRequest(instance_id=instance_id, tp_rank=tp_rank, device_id=device_id,
                                                  saves=saves, pp_rank=pp_rank)), "save")

    def query_group(self, instance_id, hashes, req_id, group_id, wait_for_full_prefix=False):
        """Returns ('loading', None, None, None) or ('ready', num_hit_blocks, lease, hit_positions)."""
        r = self._query(pb.QueryRequest(instance_id=instance_id, block_hashes=hashes, req_id=req_id,
                                        group_id=group_id, wait_for_full_prefix=wait_for_full_prefix))
        if r.WhichOneof("outcome") == "loading":
            return "loading", None, None, None
        return "ready", r.ready.num_hit_blocks, r.ready.lease, list(r.ready.hit_positions)

    def load_groups(self, instance_id, tp_rank, device_id, shm_name, groups, loads):
        """groups: list of layer-name lists; loads: list of (lease, [per group: [block id or None per leased
        block]])."""
        def targets(ids):
            return lw.LoadBlockIds(targets=[lw.LoadBlockTarget() if i is None else lw.LoadBlockTarget(block_id=i)
                                            for i in ids])
        req = lw.GroupedLoadRequest(
            instance_id=instance_id, tp_rank=tp_rank, device_id=device_id, load_state_shm=shm_name,
            groups=[lw.LoadGroup(layer_names=g) for g in groups],
            loads=[lw.GroupedLeaseLoad(lease=lease, block_ids_by_group=[targets(t) for t in per_group])
                   for lease, per_group in loads])
        return self._ok(self._load_groups(req), "load")

    def save(self, instance_id, tp_rank, device_id, layer_names, block_ids, block_hashes, pp_rank=0):
        """Every layer gets the same ids and hashes, as the connector's save worker sends them."""
        saves = [pb.SaveLayer(layer_name=n, block_ids=block_ids, block_hashes=block_hashes) for n in layer_names]
        return self._ok(self._save(pb.SaveRequest(instance_id=instance_id, tp_rank=tp_rank, device_id=device_id,
                                                  saves=saves, pp_rank=pp_rank)), "save")

    def load(self, instance_id, tp_rank, device_id, shm_name, layer_names, loads):
        """loads: list of (lease bytes, block ids)."""
        req = pb.LoadRequest(instance_id=instance_id, tp_rank=tp_rank, device_id=device_id, load_state_shm=shm_name,
                             layer_names=layer_names,
                             loads=[pb.LeaseLoad(lease=l, block_ids=ids) for l, ids in loads])
        return self._ok(self._load(req), "load")

    def query(self, instance_id, hashes, req_id):
        """Returns ('loading', None, None) or ('ready', num_hit_blocks, lease)."""
        r = self._query(pb.QueryRequest(instance_id=instance_id, block_hashes=hashes, req_id=req_id))
        if r.WhichOneof("outcome") == "loading":
            return "loading", None, None
        return "ready", r.ready.num_hit_blocks, r.ready.lease

    def query_until(self, instance_id, hashes, req_id, want, timeout=20.0):
        """Polls like vLLM's scheduler until `want` blocks hit (saves seal asynchronously); returns (hits, lease)."""
        deadline = time.time() + timeout
        hits, lease = 0, b""
        while time.time() < deadline:
            kind, hits, lease = self.query(instance_id, hashes, req_id)
            if kind == "ready" and hits >= want:
                return hits, lease
            if kind == "ready" and lease:
                self.release(lease)
            time.sleep(0.01)
        raise AssertionError(f"query for {instance_id} reached {hits} of {want} hits in {timeout}s")

    def release(self, lease):
        return self._release(pb.ReleaseRequest(lease=lease))

    def unregister(self, instance_id):
        return self._ok(self._unregister(pb.UnregisterRequest(instance_id=instance_id)), "unregister_context")

    def health(self):
        return self._ok(self._health(pb.HealthRequest()), "health")

    def session(self, instance_id, namespace, tp_size, world_size):
        """Opens the scheduler's Session stream; returns a handle whose close() cancels it (process death does too)."""
        call = self._session(pb.SessionRequest(instance_id=instance_id, namespace=namespace, tp_size=tp_size,
                                               world_size=world_size))

        def drain():
            try:
                for _ in call:
                    pass
            except grpc.RpcError:
                pass

        threading.Thread(target=drain, daemon=True).start()
        return call


def rpc_error(fn, *args, **kwargs):
    """Runs fn and returns the grpc.RpcError it raised (code, details), or fails."""
    try:
        fn(*args, **kwargs)
    except grpc.RpcError as e:
        return e.code(), e.details()
    raise AssertionError(f"{fn.__name__} did not fail")


# --------------------------------------------------------------------------------------------------- load state


class LoadState:
    """The worker's 32-byte completion flag (pegaflow sync_state.rs): u64 offset 8 | u32 magic 'PFLD' | u32 version 1
    | i64 state (0 pending, 1 ok, <0 error)."""

    MAGIC = 0x50464C44

    def __init__(self):
        self.name = "pega_load_" + uuid.uuid4().hex
        self.path = "/dev/shm/" + self.name
        fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        try:
            os.ftruncate(fd, 32)
            self.mm = mmap.mmap(fd, 32, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        struct.pack_into("<QIIq", self.mm, 0, 8, self.MAGIC, 1, 0)

    def state(self):
        return struct.unpack_from("<q", self.mm, 16)[0]

    def wait(self, timeout=30.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            s = self.state()
            if s != 0:
                return s
            time.sleep(0.0005)
        raise AssertionError(f"load state {self.name} still pending after {timeout}s")

    def close(self):
        try:
            self.mm.close()
        finally:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass


# --------------------------------------------------------------------------------------------------- layouts


class Layer:
    """One registered KV tensor: its name, wrapper bytes and (N, B, K, G), plus the raw storage for checks."""

    def __init__(self, name, mem, n, b, k, g):
        self.name, self.mem, self.n, self.b, self.k, self.g = name, mem, n, b, k, g
        self.wrapper = mem.wrapper()

    def segments(self, block):
        """Byte ranges of one block in the storage."""
        return [(block * self.b + s * self.k, self.b) for s in range(self.g)]

    def block_bytes(self, block):
        return b"".join(self.mem.read(off, n) for off, n in self.segments(block))


def registration(shape, stride, elem, layout, mla_block_size=None):
    """(N, B, K, G) as the connector's _infer_kv_cache_registration computes them."""
    if layout == "mla":
        r = mla_block_size // shape[1]
        assert mla_block_size % shape[1] == 0 and shape[0] % r == 0
        return shape[0] // r, r * stride[0] * elem, 0, 1
    if len(shape) >= 2 and shape[0] == 2:
        return shape[1], stride[1] * elem, stride[0] * elem, 2
    return shape[0], stride[0] * elem, 0, 1


def contiguous_stride(shape):
    stride, acc = [], 1
    for d in reversed(shape):
        stride.append(acc)
        acc *= d
    return tuple(reversed(stride))


# The connector's layouts (novitalabs/pegaflow v0.22.4); NB = blocks per tensor.
def layout_shape(layout, nb, layers_in_tensor=4):
    if layout == "kv_first":  # FlashAttention (2, nb, bs, h, d)
        return (2, nb, 16, 8, 128), "bfloat16", None
    if layout == "blocks_first":  # FlashInfer (nb, 2, bs, h, d)
        return (nb, 2, 16, 8, 128), "float16", None
    if layout == "cross_layer":  # one tensor for all layers (nb, L, 2, bs, h, d), registered as ALL_LAYERS
        return (nb, layers_in_tensor, 2, 16, 1, 128), "float16", None
    if layout == "mla":  # (nb_phys, bs_phys, d): 64-token kernel blocks under a 128-token scheduler block
        return (nb * 2, 64, 576), "bfloat16", 128
    raise ValueError(layout)


ELEM = {"bfloat16": 2, "float16": 2, "float32": 4, "uint8": 1}


class CudaMem:
    """A torch CUDA tensor; wrapper() is pickle.dumps(CudaIPCWrapper(t)) like the connector's worker."""

    def __init__(self, torch, shape, dtype, device):
        self.torch = torch
        self.t = torch.empty(shape, dtype=getattr(torch, dtype), device=device)
        s = self.t.untyped_storage()
        self.raw = torch.empty(0, dtype=torch.uint8, device=self.t.device).set_(s, 0, (s.nbytes(),), (1,))
        self.nbytes = s.nbytes()

    def wrapper(self):
        from pegaflow.ipc_wrapper import CudaIPCWrapper
        return pickle.dumps(CudaIPCWrapper(self.t))

    def handle_bytes(self):
        return bytes(self.t.untyped_storage()._share_cuda_()[1])

    def fill_random(self, seed):
        g = self.torch.Generator(device=self.t.device)
        g.manual_seed(seed)
        self.raw.copy_(self.torch.randint(0, 256, (self.nbytes,), dtype=self.torch.uint8, device=self.t.device,
                                          generator=g))
        self.torch.cuda.synchronize(self.t.device)

    def zero(self):
        self.raw.zero_()
        self.torch.cuda.synchronize(self.t.device)

    def read(self, off, n):
        self.torch.cuda.synchronize(self.t.device)
        return bytes(self.raw[off:off + n].cpu().numpy().tobytes())

    def snapshot(self):
        self.torch.cuda.synchronize(self.t.device)
        return self.raw.clone()

    def equal_ranges(self, snap, ranges):
        """True when every (dst_off, src_off, n): storage[dst:dst+n] == snapshot[src:src+n] (compared on the GPU)."""
        self.torch.cuda.synchronize(self.t.device)
        return all(bool(self.torch.equal(self.raw[d:d + n], snap[s:s + n])) for d, s, n in ranges)

    def zero_ranges(self, ranges):
        return all(int(self.raw[o:o + n].count_nonzero()) == 0 for o, n in ranges)


class HostMem:
    """A /dev/shm object standing in for device memory (host backend); wrapper() is its JSON descriptor."""

    def __init__(self, shape, dtype):
        self.nbytes = ELEM[dtype]
        for d in shape:
            self.nbytes *= d
        self.name = "pega_gpu_tests_" + uuid.uuid4().hex
        fd = os.open("/dev/shm/" + self.name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        os.ftruncate(fd, self.nbytes)
        self.mm = mmap.mmap(fd, self.nbytes, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        os.close(fd)

    def wrapper(self):
        return json.dumps({"kind": "host-shm", "name": self.name, "offset": 0, "size": self.nbytes}).encode()

    def handle_bytes(self):
        return self.name.encode()

    def fill_random(self, seed):
        import random
        r = random.Random(seed)
        self.mm[:] = r.randbytes(self.nbytes)

    def zero(self):
        self.mm[:] = bytes(self.nbytes)

    def read(self, off, n):
        return bytes(self.mm[off:off + n])

    def snapshot(self):
        return bytes(self.mm[:])

    def equal_ranges(self, snap, ranges):
        return all(self.mm[d:d + n] == snap[s:s + n] for d, s, n in ranges)

    def zero_ranges(self, ranges):
        return all(not any(self.mm[o:o + n]) for o, n in ranges)

    def close(self):
        self.mm.close()
        os.unlink("/dev/shm/" + self.name)


def make_layer(kind, torch, name, layout, nb, device, layers_in_tensor=4):
    shape, dtype, mla = layout_shape(layout, nb, layers_in_tensor)
    mem = CudaMem(torch, shape, dtype, device) if kind == "cuda" else HostMem(shape, dtype)
    n, b, k, g = registration(shape, contiguous_stride(shape), ELEM[dtype], "mla" if mla else layout, mla)
    return Layer(name, mem, n, b, k, g)


def block_hash(salt, i):
    """32-byte hashes, like vLLM's sha256 prefix hashes (opaque to the server)."""
    import hashlib
    return hashlib.sha256(f"{salt}:{i}".encode()).digest()
