#!/usr/bin/env python3
"""Writes hostile pickles next to this file. Each must be rejected by CudaIpcWrapperUnpickler without running
anything. Made with CPython's own pickler (no torch needed); rerun with `python3 make_hostile.py`."""

import builtins
import os
import pickle
import subprocess
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))


class Reduce:
    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return (self.fn, self.args)


def fake_module(name, **attrs):
    mod = types.ModuleType(name)
    for k, v in attrs.items():
        setattr(mod, k, v)
        if callable(v):
            v.__module__ = name
            v.__qualname__ = k
    sys.modules[name] = mod
    return mod


def write(name, data):
    with open(os.path.join(HERE, name + ".pkl"), "wb") as f:
        f.write(data)


def main():
    for proto in (2, 4, 5):
        write(f"os_system_p{proto}", pickle.dumps(Reduce(os.system, ("touch /tmp/pwned",)), protocol=proto))
        write(f"builtins_eval_p{proto}", pickle.dumps(Reduce(builtins.eval, ("1+1",)), protocol=proto))
    write("builtins_exec_p4", pickle.dumps(Reduce(builtins.exec, ("import os",)), protocol=4))
    write("subprocess_popen_p4", pickle.dumps(Reduce(subprocess.Popen, (["id"],)), protocol=4))
    write("getattr_p4", pickle.dumps(Reduce(getattr, (Reduce(__import__, ("os",)), "system")), protocol=4))
    write("protocol0_os_system", b"cos\nsystem\n(S'id'\ntR.")
    write("protocol1_list", pickle.dumps([1, 2, 3], protocol=1))

    # A wrapper-shaped object, but from a module that only looks like ours.
    class CudaIPCWrapper:  # noqa: N801
        pass

    CudaIPCWrapper.__module__ = "pegaflow.ipc_wrapper_evil"
    CudaIPCWrapper.__qualname__ = "CudaIPCWrapper"
    fake_module("pegaflow")
    fake_module("pegaflow.ipc_wrapper_evil", CudaIPCWrapper=CudaIPCWrapper)
    w = CudaIPCWrapper()
    w.handle = (0, b"\x02c" + b"\x00" * 64, 4096, 0, b"/torch_1_1_0", 0, b"\x00" * 64, True)
    write("wrong_module_p4", pickle.dumps(w, protocol=4))

    # The right class name and module, with a payload hidden in one dict value.
    mod = fake_module("pegaflow.ipc_wrapper")

    class Wrapper:
        pass

    Wrapper.__module__ = "pegaflow.ipc_wrapper"
    Wrapper.__qualname__ = "CudaIPCWrapper"
    mod.CudaIPCWrapper = Wrapper
    w = Wrapper()
    w.handle = (0, b"\x02c" + b"\x00" * 64, 4096, 0, b"/torch_1_1_0", 0, b"\x00" * 64, True)
    w.dtype = Reduce(os.system, ("id",))
    w.shape = (1,)
    w.stride = (1,)
    w.storage_offset = 0
    w.device_uuid = "00000000-0000-0000-0000-000000000000"
    write("payload_in_dtype_p4", pickle.dumps(w, protocol=4))

    # A torch-looking global that is not a dtype (torch.load would unpickle arbitrary files).
    def load(*a):
        return None

    fake_module("torch", load=load)
    w.dtype = Reduce(load, ("/tmp/x.pt",))
    write("torch_load_p4", pickle.dumps(w, protocol=4))

    # Well-formed wrapper with a list where a tuple belongs (EMPTY_LIST/APPENDS are not accepted).
    w.dtype = None
    w.shape = [1]
    write("list_shape_p4", pickle.dumps(w, protocol=4))


if __name__ == "__main__":
    main()
