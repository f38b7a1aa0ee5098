"""Worker-side client of pegaflow.ext.PdPush (docs/pd-push.md), for a vLLM worker or a test.

Needs grpcio and protobuf (the stubs in _proto/ are generated from pega-proto's pd_push.proto by
scripts-free ``python -m grpc_tools.protoc``; see README.md). Everything a forward pass touches is in
:class:`LayerReady`: one 8-byte store per layer into a mapped page.
"""

from .client import LayerReady, PushClient, StateObject, PushTimeout, kv_layer

__all__ = ["LayerReady", "PushClient", "StateObject", "PushTimeout", "kv_layer"]
