"""A KV layer in host shared memory, for pega-server's host device backend (``pega.device.backend=host``).

vLLM hands the connector torch tensors; a CPU-only run (the CI driver, python/tests/pd_connector_driver.py) hands it
these instead. The layout is vLLM's FlashAttention one without a GPU: K of every block, then V of every block, each
block's K (or V) ``block_bytes`` contiguous bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pegaflow_jvm_push import kv_layer


@dataclass(frozen=True)
class HostKvLayer:
    shm_name: str  # a /dev/shm object of this user
    offset: int
    num_blocks: int
    block_bytes: int  # one block's K (or V)

    @property
    def size(self) -> int:
        return 2 * self.num_blocks * self.block_bytes

    def describe(self, name: str):
        wrapper = json.dumps({"kind": "host-shm", "name": self.shm_name, "offset": self.offset, "size": self.size},
                             separators=(",", ":")).encode()
        return kv_layer(name, wrapper, self.num_blocks, self.block_bytes, self.num_blocks * self.block_bytes, 2)

    def segment_offset(self, segment: int, block: int) -> int:
        """Where block ``block``'s K (segment 0) or V (segment 1) starts in the shm object."""
        return self.offset + segment * self.num_blocks * self.block_bytes + block * self.block_bytes
