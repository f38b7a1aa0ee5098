"""Generated protobuf messages of pegaflow/engine.proto (see gen_proto.sh)."""
