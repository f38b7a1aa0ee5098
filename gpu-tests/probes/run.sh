#!/usr/bin/env bash
# Builds and runs the CUDA C++ probes of the copy paths (decision 0015) on a machine with nvcc and a GPU:
#   gpu-tests/probes/run.sh [OUT_DIR] [ARGS for batch_submitters ...]
# Appends to OUT_DIR/probe-batch-submitters.md (default /tmp/pega-probes); the binaries go to /tmp. First, once,
# shm_register (System V shared memory registered with CUDA as a UCX-allocated pool is, decision 0019) appends its
# line to OUT_DIR/probe-shm-register.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-/tmp/pega-probes}"
shift || true
mkdir -p "$out"
cuda_home="$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")"
# libcuda comes with the driver; the toolkit's stub is only for linking when the driver's folder has no libcuda.so
for probe in batch_submitters shm_register; do
  nvcc -O2 -std=c++17 -arch=sm_90 -o "/tmp/pega-${probe//_/-}" "$here/$probe.cu" \
    -L/usr/local/nvidia/lib64 -L/usr/lib/x86_64-linux-gnu -L"$cuda_home/lib64/stubs" -L"$cuda_home/targets/x86_64-linux/lib/stubs" -lcuda
done
/tmp/pega-shm-register | tee -a "$out/probe-shm-register.md"
{
  echo "# batch_submitters $*  ($(date -u +%Y-%m-%dT%H:%MZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader))"
  echo
  /tmp/pega-batch-submitters "$@"
} | tee -a "$out/probe-batch-submitters.md"
