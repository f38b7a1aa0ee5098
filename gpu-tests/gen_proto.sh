#!/usr/bin/env bash
# Regenerates gpu-tests/pega_proto/engine_pb2.py from the wire-compatible engine.proto, with the protoc that Maven
# already downloaded for pega-proto. Run on a development machine (the GPU machine needs no protoc).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
protoc="$(ls ~/.m2/repository/com/google/protobuf/protoc/*/protoc-*-linux-x86_64.exe | sort -V | tail -1)"
chmod +x "$protoc" 2>/dev/null || true
tmp="$(mktemp -d)"
"$protoc" -I"$root/pega-proto/src/main/protobuf" --python_out="$tmp" pegaflow/engine.proto
python3 - "$tmp/pegaflow/engine_pb2.py" "$here/pega_proto/engine_pb2.py" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
src = src.replace("from google.protobuf import runtime_version as _runtime_version\n",
                  "try:\n  from google.protobuf import runtime_version as _runtime_version\nexcept ImportError:  # protobuf < 5.26\n  _runtime_version = None\n")
src = re.sub(r"_runtime_version\.ValidateProtobufRuntimeVersion\((.*?)\n\)\n",
             lambda m: "try:  # tolerate other protobuf runtimes than the generator's\n  _runtime_version.ValidateProtobufRuntimeVersion(" + m.group(1).replace("\n", "\n  ") + "\n  )\nexcept Exception:  # noqa: BLE001\n  pass\n",
             src, flags=re.S)
open(sys.argv[2], "w").write(src)
PY
rm -rf "$tmp"
echo "wrote $here/pega_proto/engine_pb2.py"
