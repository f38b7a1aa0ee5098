#!/usr/bin/env bash
# Builds and runs the CUDA C++ probes of the copy paths (decision 0015) on a machine with nvcc and a GPU:
#   gpu-tests/probes/run.sh [OUT_DIR] [ARGS for batch_submitters ...]
# Appends to OUT_DIR/probe-batch-submitters.md (default /tmp/pega-probes); the binary goes to /tmp.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-/tmp/pega-probes}"
shift || true
mkdir -p "$out"
cuda_home="$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")"
# libcuda comes with the driver; the toolkit's stub is only for linking when the driver's folder has no libcuda.so
nvcc -O2 -std=c++17 -arch=sm_90 -o /tmp/pega-batch-submitters "$here/batch_submitters.cu" \
  -L/usr/local/nvidia/lib64 -L/usr/lib/x86_64-linux-gnu -L"$cuda_home/lib64/stubs" -L"$cuda_home/targets/x86_64-linux/lib/stubs" -lcuda
{
  echo "# batch_submitters $*  ($(date -u +%Y-%m-%dT%H:%MZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader))"
  echo
  /tmp/pega-batch-submitters "$@"
} | tee -a "$out/probe-batch-submitters.md"
