"""The registration bytes of a CUDA KV tensor: the pickle pega-server's cuda backend reads.

The server decodes ``RegisterPushLayers.wrapper_bytes`` with a restricted unpickler that accepts the reference
connector's global ``pegaflow.ipc_wrapper.CudaIPCWrapper`` (created without arguments, then its ``__dict__``: handle,
dtype, shape, stride, storage_offset, device_uuid). Where a ``pegaflow.ipc_wrapper`` module can be imported (the
reference's ``pegaflow-llm`` package, or ``gpu-tests/`` on the path) its class is used; otherwise this module
registers a minimal module of that name in ``sys.modules`` whose class sets the same attributes, so the pickle names the
same global. Needs torch with CUDA (GPU only).
"""

from __future__ import annotations

import pickle
import sys
import types


class _CudaIPCWrapper:
    """Sets the attributes of the reference's class, in its order; pickled under the reference's global name."""

    def __init__(self, tensor):
        import torch

        if tensor.storage_offset() != 0:
            raise ValueError("a KV tensor must start at its storage's first byte")
        self.handle = tensor.untyped_storage()._share_cuda_()
        self.dtype = tensor.dtype
        self.shape = tensor.shape
        self.stride = tensor.stride()
        self.storage_offset = tensor.storage_offset()
        self.device_uuid = str(torch.cuda.get_device_properties(tensor.device.index).uuid)


def _wrapper_class():
    try:
        from pegaflow.ipc_wrapper import CudaIPCWrapper  # type: ignore[import-not-found]

        return CudaIPCWrapper
    except ImportError:
        pass
    # pickle writes a class by module and qualified name and checks that importing them finds the class again
    _CudaIPCWrapper.__module__ = "pegaflow.ipc_wrapper"
    _CudaIPCWrapper.__qualname__ = _CudaIPCWrapper.__name__ = "CudaIPCWrapper"
    package = sys.modules.get("pegaflow")
    if package is None:
        package = types.ModuleType("pegaflow")
        package.__path__ = []  # a package with no files: only the submodule below exists
        sys.modules["pegaflow"] = package
    module = types.ModuleType("pegaflow.ipc_wrapper")
    module.CudaIPCWrapper = _CudaIPCWrapper
    sys.modules["pegaflow.ipc_wrapper"] = module
    package.ipc_wrapper = module
    return _CudaIPCWrapper


def wrapper_bytes(tensor) -> bytes:
    return pickle.dumps(_wrapper_class()(tensor))


def describe_tensor(name: str, tensor):
    """A vLLM KV tensor as RegisterPushLayers describes it. (2, num_blocks, ...) (FlashAttention: K and V halves) is two
    segments per block; (num_blocks, ...) (FlashInfer's (num_blocks, 2, ...), MLA) one."""
    from pegaflow_jvm_push import kv_layer

    elem = tensor.element_size()
    if tensor.dim() >= 3 and tensor.shape[0] == 2 and tensor.stride(0) >= tensor.shape[1] * tensor.stride(1):
        blocks, per_block, kv_stride, segments = tensor.shape[1], tensor.stride(1) * elem, tensor.stride(0) * elem, 2
    elif tensor.dim() >= 3 and tensor.shape[0] == 2 and tensor.stride(1) >= 2 * tensor.stride(0):
        # logically (2, num_blocks, ...) but stored blocks-outermost: one block holds its K and V back to back
        blocks, per_block, kv_stride, segments = tensor.shape[1], tensor.stride(1) * elem, 0, 1
    else:
        blocks, per_block, kv_stride, segments = tensor.shape[0], tensor.stride(0) * elem, 0, 1
    return kv_layer(name, wrapper_bytes(tensor), int(blocks), int(per_block), int(kv_stride), segments)
