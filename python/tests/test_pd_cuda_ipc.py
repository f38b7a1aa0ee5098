"""The registration bytes of a CUDA KV tensor (pegaflow_jvm_pd.cuda_ipc) name the global pega-server's restricted
unpickler accepts, pegaflow.ipc_wrapper.CudaIPCWrapper, created without arguments and then given its attributes, even
where no pegaflow package is installed. No torch needed: the attributes are set by hand here."""

import importlib.util
import os
import pickle
import pickletools
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


@unittest.skipIf(importlib.util.find_spec("pegaflow") is not None, "a pegaflow package is installed here")
class CudaIpcPickleTest(unittest.TestCase):
    def test_the_pickle_names_the_reference_global_and_carries_the_attributes_in_order(self):
        from pegaflow_jvm_pd import cuda_ipc

        cls = cuda_ipc._wrapper_class()
        self.assertIs(cuda_ipc._wrapper_class(), sys.modules["pegaflow.ipc_wrapper"].CudaIPCWrapper)
        wrapper = cls.__new__(cls)
        for key, value in (("handle", (0, b"h")), ("dtype", "bf16"), ("shape", (2, 4)), ("stride", (4, 1)),
                           ("storage_offset", 0), ("device_uuid", "u")):
            setattr(wrapper, key, value)
        ops = [(op.name, arg) for op, arg, _ in pickletools.genops(pickle.dumps(wrapper))]
        names = [name for name, _ in ops]
        strings = [arg for _, arg in ops if isinstance(arg, str)]
        self.assertEqual(strings[:2], ["pegaflow.ipc_wrapper", "CudaIPCWrapper"])
        self.assertIn("NEWOBJ", names)
        self.assertIn("BUILD", names)
        self.assertEqual([s for s in strings[2:] if s in vars(wrapper)],
                         ["handle", "dtype", "shape", "stride", "storage_offset", "device_uuid"])


if __name__ == "__main__":
    unittest.main()
