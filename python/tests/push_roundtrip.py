"""A prefill and a decode worker in one Python process, driving two push servers through pegaflow_jvm_push.

Usage: PYTHONPATH=python python3 python/tests/push_roundtrip.py <prefill host:port> <decode host:port>
Prints OK and exits 0 when every byte of every layer arrived at the decode blocks and both verdicts are 1.
Run by PushPythonClientTest (pega-push) against two real servers.
"""

import json
import mmap
import os
import sys
import uuid

import pegaflow_jvm_push as push

LAYERS = 3
BLOCKS = 16
BLOCK_BYTES = 8192  # contiguous layout: one segment per block


class Device:
    """Host-backend "GPU memory": a /dev/shm object holding LAYERS tensors back to back."""

    def __init__(self):
        self.name = "pega_dev_" + uuid.uuid4().hex
        self.size = LAYERS * BLOCKS * BLOCK_BYTES
        fd = os.open("/dev/shm/" + self.name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        os.ftruncate(fd, self.size)
        self.map = mmap.mmap(fd, self.size)
        os.close(fd)

    def layers(self):
        out = []
        for l in range(LAYERS):
            desc = json.dumps({"kind": "host-shm", "name": self.name, "offset": l * BLOCKS * BLOCK_BYTES,
                               "size": BLOCKS * BLOCK_BYTES}, separators=(",", ":")).encode()
            out.append(push.kv_layer(f"layer.{l}", desc, BLOCKS, BLOCK_BYTES, 0, 1))
        return out

    def block(self, layer, block):
        at = (layer * BLOCKS + block) * BLOCK_BYTES
        return self.map[at:at + BLOCK_BYTES]

    def write_block(self, layer, block, data):
        at = (layer * BLOCKS + block) * BLOCK_BYTES
        self.map[at:at + BLOCK_BYTES] = data

    def close(self):
        self.map.close()
        os.unlink("/dev/shm/" + self.name)


def main(prefill_target, decode_target):
    src, dst = Device(), Device()
    from_blocks, to_blocks = [1, 2, 9], [4, 5, 15]
    try:
        with push.PushClient(prefill_target) as p, push.PushClient(decode_target) as d, \
                push.StateObject() as load_state, push.StateObject() as push_state, \
                push.LayerReady(LAYERS) as ready:
            assert p.register_layers("py-prefill", 0, 1, 0, src.layers()) == LAYERS
            assert d.register_layers("py-decode", 0, 1, 0, dst.layers()) == LAYERS
            prepared = d.prepare_receive("py-decode", "py-req-d", to_blocks, [load_state], timeout_s=20)
            p.start_push("py-prefill", 0, "py-req-p", prepared.handshake, from_blocks, ready, push_state,
                         timeout_s=20)
            for l in range(LAYERS):
                for b in from_blocks:
                    src.write_block(l, b, bytes(((l * 31 + b * 7 + i) & 0xFF) for i in range(BLOCK_BYTES)))
                ready.mark_ready(l + 1)
            assert load_state.wait(30) == 1, "load_state failed"
            assert push_state.wait(30) == 1, "push_state failed"
            for l in range(LAYERS):
                for f, t in zip(from_blocks, to_blocks):
                    assert src.block(l, f) == dst.block(l, t), f"layer {l}: block {f} -> {t} differs"
    finally:
        src.close()
        dst.close()
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
