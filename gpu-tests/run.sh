#!/usr/bin/env bash
# The GPU test run of pega-server's cuda backend, repeatable on any machine with an NVIDIA GPU, python3 with torch
# and grpcio, and no Java: the JRE, the server and the Java tests come from the bundle that scripts/device-bundle.sh
# builds (.carry/pega-gpu-bundle.tar.xz).
#
#   gpu-tests/run.sh [REPORT_DIR]          (default gpu-tests/report)
#
# Steps, each logged into REPORT_DIR/report.md:
#   1. environment (GPUs, driver, torch, grpc)
#   2. the Java CUDA tests, GPU-tagged ones included (bindings, restricted unpickler, backend against a torch
#      producer process, copier throughput, pool readiness)                        -> junit.txt, java-bench.md
#   3. pega-server with pega.device.backend=cuda
#   4. e2e_test.py: the reference connector's calls over gRPC, every layout, Session, errors, TP=2, SIGKILL
#                                                                                    -> e2e.json
#   5. bandwidth.py: Save/Load throughput vs torch in the same run                  -> bandwidth.json
# Environment: PEGA_BUNDLE (bundle file), POOL_SIZE (default 32GB), GRPC_PORT (50055), HTTP_PORT (9091),
#              SKIP_JUNIT=1, SKIP_E2E=1, SKIP_BANDWIDTH=1, BACKEND=host + E2E_KIND=host (no-GPU dry run),
#              JUNIT_CLASSES="fully.qualified.Test ..." (only those), SERVER_JAVA_OPTS (e.g. -Dpega.cuda.blockingSync=true),
#              BANDWIDTH_ARGS (e.g. "--sizes 2097152 --runs 5"), RPC_OVERHEAD=1 (adds rpc_overhead.py); .carry/test-overlay and .carry/server-overlay, when
#              present, hold classes compiled after the bundle and come first on the classpaths.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
report="$(mkdir -p "${1:-$here/report}" && cd "${1:-$here/report}" && pwd)"
bundle_file="${PEGA_BUNDLE:-$root/.carry/pega-gpu-bundle.tar.xz}"
bundle="${PEGA_BUNDLE_DIR:-/tmp/pega-gpu-bundle}"
pool="${POOL_SIZE:-32GB}"
backend="${BACKEND:-cuda}"   # host: debug this script on a machine without a GPU (with E2E_KIND=host)
grpc_port="${GRPC_PORT:-50055}"
http_port="${HTTP_PORT:-9091}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
md="$report/report.md"
scratch="$(mktemp -d /tmp/pega-gpu-run.XXXXXX)"   # logs already copied into report.md
status=0
step() { echo; echo "== $*"; echo "" >> "$md"; echo "## $*" >> "$md"; echo "" >> "$md"; }
fence() { echo '```' >> "$md"; cat >> "$md"; echo '```' >> "$md"; }

echo "# pega-server GPU run, $(date -u +%Y-%m-%dT%H:%MZ)" > "$md"
echo "" >> "$md"
echo "Command: \`gpu-tests/run.sh\` (POOL_SIZE=$pool${SERVER_JAVA_OPTS:+ SERVER_JAVA_OPTS=$SERVER_JAVA_OPTS}${BANDWIDTH_ARGS:+ BANDWIDTH_ARGS=$BANDWIDTH_ARGS}${JUNIT_CLASSES:+ JUNIT_CLASSES=$JUNIT_CLASSES})" >> "$md"

step "Environment"
{
  nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max --format=csv 2>&1
  python3 -c "import sys, grpc, torch; print('python', sys.version.split()[0], '| torch', torch.__version__, '| grpcio', grpc.__version__, '| CUDA', torch.version.cuda)" 2>&1
  python3 -c "import google.protobuf as p; print('protobuf', p.__version__)" 2>&1
  echo "cpus $(nproc), $(grep MemTotal /proc/meminfo), NUMA nodes: $(ls -d /sys/devices/system/node/node* 2>/dev/null | wc -l), $(grep Hugepagesize /proc/meminfo), kernel $(uname -r)"
} | tee "$scratch/env.txt" | fence

if [[ ! -x "$bundle/jre/bin/java" ]]; then
  if [[ ! -f "$bundle_file" ]]; then
    echo "no Java bundle: build it with scripts/device-bundle.sh (looked for $bundle_file)" | tee -a "$md"
    exit 2
  fi
  mkdir -p "$bundle" && tar -xJf "$bundle_file" -C "$bundle"
fi
java="$bundle/jre/bin/java"

if [[ "${SKIP_JUNIT:-0}" != 1 ]]; then
  step "Java CUDA tests (JUnit, GPU-tagged included)"
  test_cp="$(tr ':' '\n' < "$bundle/test/classpath.txt" | sed "s|^|$bundle/test/|" | paste -sd:)"
  # classes compiled after the bundle was packed (scripts/device-bundle.sh --overlay) win over the bundle's
  [[ -d "$root/.carry/test-overlay" ]] && test_cp="$root/.carry/test-overlay:$test_cp"
  : > "$report/java-bench.md"
  (cd "$root" && timeout "${JUNIT_TIMEOUT:-240}" "$java" -Xmx4g -Dlogback.configurationFile="$here/java/logback-gpu.xml" -Dpega.gpu.report="$report/java-bench.md" -Dpega.gpuTests.dir="$here" \
     -Dpega.gpu.poolGiB="${POOL_READINESS_GIB:-8}" -cp "$test_cp" GpuTestMain "$scratch/junit.txt" ${JUNIT_CLASSES:-}) > "$report/junit.log" 2>&1
  rc=$?
  [[ $rc == 0 ]] || status=1
  { grep -E '^(PASS|FAIL|SKIP|tests found)' "$scratch/junit.txt" 2>/dev/null | grep -v '^PASS CudaIpcWrapperUnpicklerTest'  || tail -50 "$report/junit.log"; } | fence
  echo "(exit $rc)" >> "$md"
  cat "$report/java-bench.md" >> "$md"
fi

step "pega-server (pega.device.backend=$backend, pool $pool)"
server_cp="$(tr ':' '\n' < "$bundle/server/classpath.txt" | sed "s|^|$bundle/server/|" | paste -sd:)"
[[ -d "$root/.carry/server-overlay" ]] && server_cp="$root/.carry/server-overlay:$server_cp"
t0=$(date +%s.%N)
(cd "$root" && exec "$java" -Xmx4g ${SERVER_JAVA_OPTS:-} -cp "$server_cp" "$(cat "$bundle/server/main-class.txt")" \
   --pega.device.backend="$backend" --pega.pool.size="$pool" --spring.grpc.server.port="$grpc_port" \
   --server.port="$http_port") > "$report/server.log" 2>&1 &
server_pid=$!
ready=0
for _ in $(seq 1 300); do
  if python3 -c "import sys; sys.path.insert(0, '$here'); from pega_client import EngineClient; EngineClient('127.0.0.1:$grpc_port', ready_timeout=2).health()" 2>/dev/null; then
    ready=1; break
  fi
  kill -0 $server_pid 2>/dev/null || break
  sleep 0.5
done
t1=$(date +%s.%N)
{
  echo "ready=$ready after $(python3 -c "print(round($t1-$t0,1))") s (JVM start + pool mmap/pre-touch/registration + Spring)"
  grep -E 'cuda backend up|cuda device|pool|Started PegaServerApplication|ERROR|Exception' "$report/server.log" | head -20
} | fence
if [[ $ready != 1 ]]; then
  tail -60 "$report/server.log" | fence
  kill $server_pid 2>/dev/null
  exit 1
fi

if [[ "${SKIP_E2E:-0}" != 1 ]]; then
  step "End-to-end (e2e_test.py, reference connector calls over gRPC)"
  timeout "${E2E_TIMEOUT:-200}" python3 "$here/e2e_test.py" --kind "${E2E_KIND:-cuda}" --addr "127.0.0.1:$grpc_port" --out "$report/e2e.json" > "$scratch/e2e.log" 2>&1
  rc=$?
  [[ $rc == 0 ]] || status=1
  cat "$scratch/e2e.log" | fence
fi

if [[ "${SKIP_BANDWIDTH:-0}" != 1 ]]; then
  step "Bandwidth (bandwidth.py, through the server vs torch in the same run)"
  timeout "${BANDWIDTH_TIMEOUT:-200}" python3 "$here/bandwidth.py" --addr "127.0.0.1:$grpc_port" --http "127.0.0.1:$http_port" ${BANDWIDTH_ARGS:-} --out "$report/bandwidth.json" > "$scratch/bandwidth.log" 2>&1
  rc=$?
  [[ $rc == 0 ]] || status=1
  [[ $rc == 0 ]] || tail -30 "$scratch/bandwidth.log" | fence
  [[ -f "$report/bandwidth.json" ]] && python3 - "$report/bandwidth.json" >> "$md" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"GPU: {d['gpu']}, torch {d['torch']}; 1 GiB per batch, scattered blocks, median of runs, GB/s = 1e9 B/s\n")
print("| block | Save | torch D2H per block | torch D2H one copy | Save/torch | Load | torch H2D per block | torch H2D one copy | Load/torch | Save+Load at once | torch two streams |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for r in d["results"]:
    kb = r["block_bytes"] // 1024
    bs = f"{kb} KiB" if kb < 1024 else f"{kb // 1024} MiB"
    print(f"| {bs} | {r['save_GBps']} | {r['torch_blockwise_d2h_GBps']} | {r['torch_contiguous_d2h_GBps']} | {r['save_vs_torch_blockwise']} | "
          f"{r['load_GBps']} | {r['torch_blockwise_h2d_GBps']} | {r['torch_contiguous_h2d_GBps']} | {r['load_vs_torch_blockwise']} | "
          f"{r['both_aggregate_GBps']} | {r['torch_two_stream_aggregate_GBps']} |")
PY
fi

if [[ "${RPC_OVERHEAD:-0}" == 1 ]]; then
  step "RPC overhead (rpc_overhead.py: client time vs the server's handler time)"
  timeout 300 python3 "$here/rpc_overhead.py" --addr "127.0.0.1:$grpc_port" --http "127.0.0.1:$http_port" --out "$report/rpc_overhead.json" > "$scratch/ovh.log" 2>&1
  [[ $? == 0 ]] || status=1
  cat "$scratch/ovh.log" | fence
fi

step "Server shutdown"
kill -TERM $server_pid 2>/dev/null
for _ in $(seq 1 60); do kill -0 $server_pid 2>/dev/null || break; sleep 0.5; done
kill -0 $server_pid 2>/dev/null && kill -KILL $server_pid
grep -E 'WARN|ERROR' "$report/server.log" | grep -v -i 'deprecat' | tail -15 | fence
echo "" >> "$md"
echo "Overall: $([[ $status == 0 ]] && echo PASS || echo FAIL)" >> "$md"
echo "report: $md"
exit $status
