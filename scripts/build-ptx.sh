#!/usr/bin/env bash
# Builds the cuda backend's copy kernel into the PTX that ships as a resource and is loaded with cuModuleLoadData:
#
#   pega-core/src/main/cuda/copy_kernel.cu  ->  pega-core/src/main/resources/io/pegaflow/core/device/cuda/copy_kernel.ptx
#
# Usage: scripts/build-ptx.sh [OUTPUT]   (default: the resource above; CopyKernelPtxTest builds to a temporary file
# and compares). Needs nvcc (CUDA 13). PTX for compute_80 runs on Ampere, Hopper and later: the driver compiles it
# for the device at load time. Run it after every change to the .cu file and commit both.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/pega-core/src/main/cuda/copy_kernel.cu"
out="${1:-$root/pega-core/src/main/resources/io/pegaflow/core/device/cuda/copy_kernel.ptx}"
mkdir -p "$(dirname "$out")"
nvcc -ptx -arch=compute_80 -O3 -std=c++17 -o "$out" "$src"
