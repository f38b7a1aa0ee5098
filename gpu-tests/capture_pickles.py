#!/usr/bin/env python3
"""Capture real `pickle.dumps(CudaIPCWrapper(t))` bytes from torch for the Java unpickler tests, and probe the
CUDA IPC facts the Java backend relies on (with ctypes against libcuda, no Java needed).

Usage: python3 capture_pickles.py OUT_DIR
Writes OUT_DIR/pickles.json (base64 pickles + what each must decode to) and OUT_DIR/probe.json.
"""

import base64
import ctypes
import json
import os
import pickle
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

from pegaflow.ipc_wrapper import CudaIPCWrapper  # noqa: E402


def registration(t, mla_block_size=None):
    """(N, B, K, G) exactly as the reference worker computes them.

    The worker is python/pegaflow/connector/worker.py of novitalabs/pegaflow v0.22.4.
    """
    shape, stride, elem = tuple(t.shape), tuple(t.stride()), t.element_size()
    if mla_block_size is not None:
        r = mla_block_size // shape[1]
        return shape[0] // r, r * stride[0] * elem, 0, 1
    if len(shape) >= 2 and shape[0] == 2:
        return shape[1], stride[1] * elem, stride[0] * elem, 2
    return shape[0], stride[0] * elem, 0, 1


def expect_of(w, layout, reg):
    h1 = bytes(w.handle[1])
    if len(h1) == 66:
        fmt, ver, raw = "VERSIONED", h1[0], h1[2:]
    elif len(h1) == 64:
        fmt, ver, raw = "RAW", 0, h1
    else:
        fmt, ver, raw = "OTHER", h1[0], h1
    return {
        "layout": layout,
        "producer_device": w.handle[0],
        "handle_format": fmt,
        "handle_version": ver,
        "handle_type": chr(h1[1]) if len(h1) >= 2 else "",
        "ipc_handle_hex": raw.hex(),
        "storage_size": w.handle[2],
        "storage_offset_bytes": w.handle[3],
        "ref_counter_name_hex": bytes(w.handle[4]).hex(),
        "ref_counter_offset": w.handle[5],
        "event_handle_hex": bytes(w.handle[6]).hex(),
        "event_sync_required": bool(w.handle[7]),
        "dtype": str(w.dtype).replace("torch.", ""),
        "shape": list(w.shape),
        "stride": list(w.stride) if getattr(w, "stride", None) is not None else None,
        "storage_offset": getattr(w, "storage_offset", 0),
        "device_uuid": w.device_uuid,
        "registration": {"N": reg[0], "B": reg[1], "K": reg[2], "G": reg[3]} if reg else None,
    }


def main(out):
    os.makedirs(out, exist_ok=True)
    dev = torch.device("cuda:0")
    torch.cuda.set_device(0)
    keep = []
    entries = []

    def add(name, t, layout, reg, wrapper=None):
        w = wrapper or CudaIPCWrapper(t)
        keep.append((t, w))
        for proto in (2, 3, 4, 5):
            data = pickle.dumps(w, protocol=proto)
            entries.append({"name": f"{name}_p{proto}", "protocol": proto, "b64": base64.b64encode(data).decode(),
                            "length": len(data), "expect": expect_of(w, layout, reg)})
        # the default protocol, as the connector calls it
        data = pickle.dumps(w)
        entries.append({"name": f"{name}_default", "protocol": pickle.DEFAULT_PROTOCOL,
                        "b64": base64.b64encode(data).decode(), "length": len(data),
                        "expect": expect_of(w, layout, reg)})

    t = torch.zeros((2, 6, 16, 8, 128), dtype=torch.bfloat16, device=dev)
    add("kv_first_bf16", t, "KV-first", registration(t))
    t = torch.zeros((6, 2, 16, 8, 128), dtype=torch.float16, device=dev)
    add("blocks_first_fp16", t, "blocks-first", registration(t))
    t = torch.zeros((6, 4, 2, 16, 1, 128), dtype=torch.float16, device=dev)
    add("cross_layer_fp16", t, "cross-layer ALL_LAYERS", registration(t))
    t = torch.zeros((12, 64, 576), dtype=torch.bfloat16, device=dev)
    add("mla_bf16", t, "MLA (bs 128 over 64-token kernel blocks)", registration(t, mla_block_size=128))
    t = torch.zeros((2, 8, 16, 8, 128), dtype=torch.float8_e4m3fn, device=dev)
    add("kv_first_fp8", t, "KV-first fp8", registration(t))
    t = torch.zeros((4, 1024), dtype=torch.float32, device=dev)
    add("blocks_first_fp32", t, "blocks-first fp32", registration(t))
    base = torch.zeros(2 * 6 * (16 * 8 * 128 + 256), dtype=torch.float16, device=dev)
    t = base.as_strided((2, 6, 16, 8, 128), (6 * (16 * 8 * 128 + 256), 16 * 8 * 128 + 256, 8 * 128, 128, 1))
    add("kv_first_padded_fp16", t, "KV-first padded blocks", registration(t))
    a = torch.zeros((2, 64, 16, 8, 128), dtype=torch.float16, device=dev)
    b = torch.zeros((2, 64, 16, 8, 128), dtype=torch.float16, device=dev)
    add("shared_a", a, "KV-first, shares a base allocation with shared_b", registration(a))
    add("shared_b", b, "KV-first, shares a base allocation with shared_a", registration(b))

    # legacy variants: the same real wrapper, with the older raw 64-byte handle / without stride and offset
    t = torch.zeros((2, 6, 16, 8, 128), dtype=torch.bfloat16, device=dev)
    w = CudaIPCWrapper(t)
    h = list(w.handle)
    h[1] = bytes(h[1])[2:]
    w.handle = tuple(h)
    add("legacy_raw64", t, "KV-first, raw 64-byte handle (torch < 2.4 format)", registration(t), wrapper=w)
    t = torch.zeros((6, 2, 16, 8, 128), dtype=torch.float16, device=dev)
    w = CudaIPCWrapper(t)
    del w.stride
    del w.storage_offset
    add("legacy_nostride", t, "blocks-first, wrapper without stride/storage_offset", registration(t), wrapper=w)

    # expandable segments: a real export, made in a child process that enables them
    code = ("import sys,pickle,base64,torch;sys.path.insert(0,%r);from pegaflow.ipc_wrapper import CudaIPCWrapper;"
            "t=torch.zeros((2,6,16,8,128),dtype=torch.bfloat16,device='cuda:0');"
            "print(base64.b64encode(pickle.dumps(CudaIPCWrapper(t))).decode())") % HERE
    env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    if r.returncode == 0:
        data = base64.b64decode(r.stdout.strip().splitlines()[-1])
        entries.append({"name": "expandable_default", "protocol": pickle.DEFAULT_PROTOCOL,
                        "b64": base64.b64encode(data).decode(), "length": len(data), "expect": None})
    else:
        entries.append({"name": "expandable_error", "error": r.stderr[-2000:]})

    with open(os.path.join(out, "pickles.json"), "w") as f:
        json.dump({"torch": torch.__version__, "python": sys.version, "entries": entries}, f, indent=1)
    probe = ipc_probe(a, b)
    with open(os.path.join(out, "probe.json"), "w") as f:
        json.dump(probe, f, indent=1)
    print(json.dumps(probe, indent=1))


# ------------------------------------------------------------------ ctypes probe of the driver facts


class IpcHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * 64)]


def cu():
    lib = ctypes.CDLL("libcuda.so.1")
    for fn in ("cuIpcOpenMemHandle_v2", "cuMemGetAddressRange_v2", "cuMemGetInfo_v2", "cuMemcpyDtoH_v2"):
        getattr(lib, fn)
    return lib


def check(rc, what):
    if rc != 0:
        raise RuntimeError(f"{what} -> {rc}")


PRODUCER = r"""
import sys, time, torch, pickle
sys.path.insert(0, %r)
from pegaflow.ipc_wrapper import CudaIPCWrapper
t = torch.full((1 << 30,), 7, dtype=torch.uint8, device='cuda:0')
torch.cuda.synchronize()
w = CudaIPCWrapper(t)
sys.stdout.write(bytes(w.handle[1])[2:].hex() + ' %%d %%d\n' %% (w.handle[2], w.handle[3]))
sys.stdout.flush()
time.sleep(600)
"""


def ipc_probe(a, b):
    """Facts for the Java backend: same handle for a shared allocation, double open, address range, and what
    happens to the memory when the producer is SIGKILLed while we hold a mapping."""
    res = {}
    wa, wb = CudaIPCWrapper(a), CudaIPCWrapper(b)
    res["shared_same_handle"] = bytes(wa.handle[1]) == bytes(wb.handle[1])
    res["shared_offsets"] = [wa.handle[3], wb.handle[3]]
    res["uuid_torch"] = wa.device_uuid
    lib = cu()
    ctx = ctypes.c_void_p()
    check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0), "retain")
    check(lib.cuCtxSetCurrent(ctx), "setcurrent")
    uuid = (ctypes.c_ubyte * 16)()
    check(lib.cuDeviceGetUuid_v2(uuid, 0), "uuid")
    res["uuid_driver"] = bytes(uuid).hex()
    bus = ctypes.create_string_buffer(64)
    check(lib.cuDeviceGetPCIBusId(bus, 64, 0), "busid")
    res["pci_bus_id"] = bus.value.decode()
    try:
        with open(f"/sys/bus/pci/devices/{bus.value.decode().lower()}/numa_node") as f:
            res["sysfs_numa_node"] = f.read().strip()
    except OSError as e:
        res["sysfs_numa_node"] = f"error {e}"

    def meminfo():
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        check(lib.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)), "meminfo")
        return free.value

    # producer process, SIGKILLed while we hold its mapping
    p = subprocess.Popen([sys.executable, "-c", PRODUCER % HERE], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        return _probe_with_producer(lib, p, res, meminfo)
    except Exception as e:  # noqa: BLE001  (a failed probe must not hang the run: report and go on)
        res["error"] = f"{type(e).__name__}: {e}"
        return res
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()


def _probe_with_producer(lib, p, res, meminfo):
    line = p.stdout.readline().split()
    handle = IpcHandle()
    handle.reserved = bytes.fromhex(line[0])
    size, off = int(line[1]), int(line[2])
    free0 = meminfo()
    ptr = ctypes.c_uint64()
    t0 = time.perf_counter()
    rc = lib.cuIpcOpenMemHandle_v2(ctypes.byref(ptr), handle, 1)
    res["open_rc"] = rc
    res["open_ms"] = (time.perf_counter() - t0) * 1e3
    ptr2 = ctypes.c_uint64()
    res["second_open_rc"] = lib.cuIpcOpenMemHandle_v2(ctypes.byref(ptr2), handle, 1)
    res["second_open_same_ptr"] = ptr2.value == ptr.value
    base, rsize = ctypes.c_uint64(), ctypes.c_size_t()
    check(lib.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(rsize), ctypes.c_uint64(ptr.value + off)),
          "range")
    res["range"] = {"base_eq_ptr": base.value == ptr.value, "range_size": rsize.value, "storage_size": size,
                    "offset": off}
    buf = (ctypes.c_ubyte * 16)()
    check(lib.cuMemcpyDtoH_v2(buf, ctypes.c_uint64(ptr.value + off), 16), "dtoh")
    res["read_before_kill"] = list(buf)
    p.send_signal(signal.SIGKILL)
    p.wait()
    time.sleep(1.0)
    free1 = meminfo()
    rc = lib.cuMemcpyDtoH_v2(buf, ctypes.c_uint64(ptr.value + off), 16)
    res["read_after_kill_rc"] = rc
    res["read_after_kill"] = list(buf)
    if res["second_open_rc"] == 0 and not res["second_open_same_ptr"]:
        lib.cuIpcCloseMemHandle(ctypes.c_uint64(ptr2.value))
    res["close_rc"] = lib.cuIpcCloseMemHandle(ctypes.c_uint64(ptr.value))
    if res["second_open_rc"] == 0 and res["second_open_same_ptr"]:
        res["close2_rc"] = lib.cuIpcCloseMemHandle(ctypes.c_uint64(ptr.value))
    time.sleep(0.5)
    free2 = meminfo()
    res["free_mib"] = {"mapped_before_kill": free0 >> 20, "after_kill_still_mapped": free1 >> 20,
                       "after_close": free2 >> 20}
    return res


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "out")
