"""Test-side CudaIPCWrapper that pickles like the reference connector's (pegaflow v0.22.4).

The server never imports this module: it decodes the pickle with a restricted unpickler that only reads the
instance dict. What matters is the pickled shape, which python/pegaflow/ipc_wrapper.py of novitalabs/pegaflow v0.22.4
produces:

    global pegaflow.ipc_wrapper.CudaIPCWrapper, created with no arguments (NEWOBJ), then its __dict__ with the keys
    handle, dtype, shape, stride, storage_offset, device_uuid  (in that insertion order)

so this class sets the same attributes in the same order from the same torch calls.
"""

import torch


def device_uuid(index: int) -> str:
    """torch's spelling of a GPU UUID: lowercase 8-4-4-4-12 hex, no 'GPU-' prefix."""
    return str(torch.cuda.get_device_properties(index).uuid)


class CudaIPCWrapper:
    def __init__(self, tensor: torch.Tensor):
        assert tensor.storage_offset() == 0, "Tensor must have zero storage offset"
        storage = tensor.untyped_storage()
        self.handle = storage._share_cuda_()
        self.dtype = tensor.dtype
        self.shape = tensor.shape
        self.stride = tensor.stride()
        self.storage_offset = tensor.storage_offset()
        self.device_uuid = device_uuid(tensor.device.index)


__all__ = ["CudaIPCWrapper", "device_uuid"]
