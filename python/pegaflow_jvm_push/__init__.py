"""Worker-side client of pegaflow.ext.PdPush (docs/pd-push.md), for a vLLM worker or a test.

Needs grpcio and protobuf (the stubs in _proto/ are generated from pega-proto's pd_push.proto by
scripts-free ``python -m grpc_tools.protoc``; see README.md). Everything a forward pass touches is in
:class:`LayerReady`: one 8-byte store per layer into a mapped page. :mod:`.timeline` (the overlap arithmetic) needs
neither, so the client is imported only when one of its names is used.
"""

_CLIENT_NAMES = ("LayerReady", "PushClient", "StateObject", "PushTimeout", "PushServerGone", "kv_layer")

__all__ = list(_CLIENT_NAMES)


def __getattr__(name):
    if name in _CLIENT_NAMES:
        from . import client

        return getattr(client, name)
    raise AttributeError(name)
