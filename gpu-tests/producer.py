#!/usr/bin/env python3
"""A stand-in for a vLLM worker's KV-cache allocation, driven over stdin/stdout by the Java GPU tests.

Start: python3 producer.py DEVICE   (PYTORCH_CUDA_ALLOC_CONF passes through, e.g. expandable_segments:True)
Commands, one per line on stdin; each answer is one JSON line on stdout:
  alloc NAME LAYOUT SEED       allocate a tensor (layouts below), fill byte i with (i*31 + SEED) % 256, answer
                               {"name", "pickle_b64", "nbytes", "N", "B", "K", "G", "ptr"}
  sha NAME                     sha256 of the tensor's storage bytes      -> {"sha256"}
  zero NAME                    zero the storage                          -> {"ok"}
  free NAME                    drop the tensor and empty torch's cache   -> {"ok"}
  meminfo                      torch.cuda.mem_get_info()                 -> {"free", "total"}
  exit
"""

import base64
import hashlib
import json
import os
import pickle
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

from pegaflow.ipc_wrapper import CudaIPCWrapper  # noqa: E402

LAYOUTS = {
    # name: (shape, dtype, mla_block_size or None)
    "kv_first": ((2, 16, 16, 8, 128), torch.bfloat16, None),  # 16 blocks of 32 KiB per K/V plane
    "blocks_first": ((16, 2, 16, 8, 128), torch.float16, None),
    "cross_layer": ((16, 4, 2, 16, 1, 128), torch.float16, None),
    "mla": ((32, 64, 576), torch.bfloat16, 128),
    "shared": ((2, 64, 16, 8, 128), torch.float16, None),  # 4 MiB: two of these share one 20 MiB segment
    "big": ((1 << 30,), torch.uint8, None),  # 1 GiB, blocks-first with 1-byte blocks: for copy timing only
}


def registration(t, mla_block_size):
    shape, stride, elem = tuple(t.shape), tuple(t.stride()), t.element_size()
    if mla_block_size is not None:
        r = mla_block_size // shape[1]
        return shape[0] // r, r * stride[0] * elem, 0, 1
    if len(shape) >= 2 and shape[0] == 2:
        return shape[1], stride[1] * elem, stride[0] * elem, 2
    return shape[0], stride[0] * elem, 0, 1


def pattern(nbytes, seed, device):
    i = torch.arange(nbytes, dtype=torch.int64, device=device)
    return ((i * 31 + seed) % 256).to(torch.uint8)


def storage_bytes(t):
    s = t.untyped_storage()
    return torch.empty(0, dtype=torch.uint8, device=t.device).set_(s, 0, (s.nbytes(),), (1,))


def main():
    dev = torch.device(f"cuda:{int(sys.argv[1]) if len(sys.argv) > 1 else 0}")
    torch.cuda.set_device(dev)
    tensors = {}
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        cmd = parts[0]
        try:
            if cmd == "alloc":
                name, layout, seed = parts[1], parts[2], int(parts[3])
                shape, dtype, mla = LAYOUTS[layout]
                t = torch.empty(shape, dtype=dtype, device=dev)
                raw = storage_bytes(t)
                raw.copy_(pattern(raw.numel(), seed, dev))
                torch.cuda.synchronize(dev)
                tensors[name] = t
                n, b, k, g = registration(t, mla)
                data = pickle.dumps(CudaIPCWrapper(t))
                out = {"name": name, "pickle_b64": base64.b64encode(data).decode(), "nbytes": raw.numel(),
                       "N": n, "B": b, "K": k, "G": g, "ptr": t.data_ptr()}
            elif cmd == "sha":
                torch.cuda.synchronize(dev)
                out = {"sha256": hashlib.sha256(storage_bytes(tensors[parts[1]]).cpu().numpy().tobytes()).hexdigest()}
            elif cmd == "zero":
                storage_bytes(tensors[parts[1]]).zero_()
                torch.cuda.synchronize(dev)
                out = {"ok": True}
            elif cmd == "free":
                del tensors[parts[1]]
                torch.cuda.empty_cache()
                out = {"ok": True}
            elif cmd == "meminfo":
                free, total = torch.cuda.mem_get_info(dev)
                out = {"free": free, "total": total}
            elif cmd == "exit":
                return
            else:
                out = {"error": f"unknown command {cmd}"}
        except Exception as e:  # report, keep serving
            out = {"error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
