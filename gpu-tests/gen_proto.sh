#!/usr/bin/env bash
# Regenerates the checked-in Python stubs, so that they load on every protobuf/grpcio runtime a worker may have, from
# Debian bookworm's (protobuf 4.21, grpcio 1.51: what CI installs) to the GPU machine's (protobuf 7, grpcio 1.84):
#   gpu-tests/pega_proto/engine_pb2.py                 messages of the wire-compatible engine.proto
#   gpu-tests/pega_proto/load_wire_pb2.py              the grouped Load of pegaflow-llm 0.23.7+ (compat/load_wire.proto)
#   python/pegaflow_jvm_push/_proto/pd_push_pb2.py       messages of pegaflow/ext/pd_push.proto
#   python/pegaflow_jvm_push/_proto/pd_push_pb2_grpc.py  its service stub
# Messages come from the protoc Maven already downloaded for pega-proto, with the generator's runtime-version check
# made tolerant; the service stub comes from a grpc_tools protoc plugin (Debian: python3-grpc-tools), without the
# "grpcio >= the generator's version" guard and the keyword arguments older grpcio lacks. Run on a development machine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
protos="$root/pega-proto/src/main/protobuf"
protoc="$(ls ~/.m2/repository/com/google/protobuf/protoc/*/protoc-*-linux-x86_64.exe | sort -V | tail -1)"
chmod +x "$protoc" 2>/dev/null || true
python="${PYTHON:-python3}"
"$python" -c "import grpc_tools" 2>/dev/null || python=/usr/bin/python3
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$protoc" -I"$protos" --python_out="$tmp" pegaflow/engine.proto pegaflow/compat/load_wire.proto \
  pegaflow/ext/pd_push.proto
"$python" -m grpc_tools.protoc -I"$protos" --grpc_python_out="$tmp" pegaflow/ext/pd_push.proto

tolerant_messages() {  # generated messages -> a copy that also loads where runtime_version is missing or older
  python3 - "$1" "$2" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
src = src.replace("from google.protobuf import runtime_version as _runtime_version\n",
                  "try:\n  from google.protobuf import runtime_version as _runtime_version\nexcept ImportError:  # protobuf < 5.26\n  _runtime_version = None\n")
src = re.sub(r"_runtime_version\.ValidateProtobufRuntimeVersion\((.*?)\n\)\n",
             lambda m: "try:  # tolerate other protobuf runtimes than the generator's\n  _runtime_version.ValidateProtobufRuntimeVersion(" + m.group(1).replace("\n", "\n  ") + "\n  )\nexcept Exception:  # noqa: BLE001\n  pass\n",
             src, flags=re.S)
open(sys.argv[2], "w").write(src)
PY
}
tolerant_messages "$tmp/pegaflow/engine_pb2.py" "$here/pega_proto/engine_pb2.py"
tolerant_messages "$tmp/pegaflow/compat/load_wire_pb2.py" "$here/pega_proto/load_wire_pb2.py"
push="$root/python/pegaflow_jvm_push/_proto"
tolerant_messages "$tmp/pegaflow/ext/pd_push_pb2.py" "$push/pd_push_pb2.py"
python3 - "$tmp/pegaflow/ext/pd_push_pb2_grpc.py" "$push/pd_push_pb2_grpc.py" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
src = src.replace("from pegaflow.ext import pd_push_pb2 as", "from . import pd_push_pb2 as")
# newer plugins refuse an older grpcio at import time and pass arguments older grpcio does not take
src = re.sub(r"\nGRPC_GENERATED_VERSION = .*?\n    \)\n", "\n", src, flags=re.S)
src = re.sub(r",\s*_registered_method=True", "", src)
open(sys.argv[2], "w").write(src)
PY
echo "wrote $here/pega_proto/{engine,load_wire}_pb2.py and $push/pd_push_pb2{,_grpc}.py"
