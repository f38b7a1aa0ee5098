"""Test-only stand-in for the `pegaflow` package of the reference connector.

Only `pegaflow.ipc_wrapper.CudaIPCWrapper` exists here, so that pickles made by the GPU test client carry exactly
the global the reference vLLM worker writes (`pegaflow.ipc_wrapper.CudaIPCWrapper`). If the real `pegaflow-llm`
package is installed, put it first on PYTHONPATH instead and the tests use it unchanged.
"""
