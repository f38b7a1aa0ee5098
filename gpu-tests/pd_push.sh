#!/usr/bin/env bash
# P/D layer push on one GPU (docs/pd-push.md "On an H200"): two pega-server processes with pega.pd.enabled
# and the cuda backend (a prefill server and a decode server, UCX between them over TCP or shared memory on this
# host), and gpu-tests/pd_push.py's two torch worker processes on the same GPU: the prefill worker runs a synthetic
# forward pass (one matmul per layer of a Qwen3-8B layer's weight FLOPs) and marks each layer ready through the Python
# client; the decode worker waits for its load_state. Prints, per token count, the added latency (last layer ready ->
# decode completion signal), the forward time and the overlap (from the decode server's per-layer timeline, GET /pd).
#
#   gpu-tests/pd_push.sh [REPORT_DIR]          (default gpu-tests/report-pd)
#   DRIVER=connector gpu-tests/pd_push.sh      the same through PdConnector in vLLM's call order (pd_connector.py)
#
# Needs: an NVIDIA GPU, python3 with torch and grpcio (protobuf matching python/pegaflow_jvm_push/_proto), and the
# bundle of scripts/device-bundle.sh (gpu-bundle/pega-gpu-bundle.tar.xz) with its ucx/ directory (Debian's libucx0;
# `scripts/device-bundle.sh --ucx` adds it to an older bundle).
# Environment: TOKENS (default "512 2048 8192 16000", commas or blanks), RUNS (5, after one warm-up per token count),
#              POOL_SIZE (each server's pool, default 8GB), TRANSPORTS (pega.pd.transports values, one server pair
#              each, default "tcp shm,self"), PEGA_BUNDLE, PEGA_BUNDLE_DIR, SERVER_JAVA_OPTS, SERVER_ARGS, PD_ARGS (more pd_push.py options), DRIVER (push: pd_push.py, the default; connector: pd_connector.py).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
report="$(mkdir -p "${1:-$here/report-pd}" && cd "${1:-$here/report-pd}" && pwd)"
bundle_file="${PEGA_BUNDLE:-$root/gpu-bundle/pega-gpu-bundle.tar.xz}"
bundle="${PEGA_BUNDLE_DIR:-/tmp/pega-gpu-bundle}"
pool="${POOL_SIZE:-8GB}"
backend=cuda
tokens="$(echo "${TOKENS:-512 2048 8192 16000}" | tr ', ' '\n\n' | grep -v '^$' | paste -sd,)"
runs="${RUNS:-5}"
case "${DRIVER:-push}" in
  push) driver=pd_push ;;
  connector) driver=pd_connector ;;
  *) echo "DRIVER must be push or connector, not '${DRIVER}'" >&2; exit 2 ;;
esac
token="pd-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
md="$report/report.md"
status=0
pids=()
fence() { echo '```' >> "$md"; cat >> "$md"; echo '```' >> "$md"; }
step() { echo; echo "== $*"; printf '\n## %s\n\n' "$*" >> "$md"; }
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 1 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$p" 2>/dev/null
  done
  pids=()
}
trap cleanup EXIT

echo "# P/D push on one GPU, $(date -u +%Y-%m-%dT%H:%MZ)" > "$md"
echo "" >> "$md"
echo "Command: \`gpu-tests/pd_push.sh\` (DRIVER=${DRIVER:-push} TOKENS=$tokens RUNS=$runs POOL_SIZE=$pool TRANSPORTS=${TRANSPORTS:-tcp shm,self})" >> "$md"

step "Environment"
{
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv 2>&1
  python3 -c "import sys, grpc, torch; print('python', sys.version.split()[0], '| torch', torch.__version__, '| grpcio', grpc.__version__, '| CUDA', torch.version.cuda)" 2>&1
  echo "cpus $(nproc), kernel $(uname -r)"
} | tee /dev/stderr | fence

if [[ ! -x "$bundle/jre/bin/java" || ! -d "$bundle/ucx" ]]; then
  [[ -f "$bundle_file" ]] || { echo "no Java bundle: build it with scripts/device-bundle.sh (looked for $bundle_file)" | tee -a "$md"; exit 2; }
  rm -rf "$bundle" && mkdir -p "$bundle" && tar -xJf "$bundle_file" -C "$bundle"
fi
[[ -f "$bundle/ucx/env.sh" ]] || { echo "the bundle has no ucx/: scripts/device-bundle.sh --ucx" | tee -a "$md"; exit 2; }
# shellcheck disable=SC1091
source "$bundle/ucx/env.sh"
java="$bundle/jre/bin/java"
server_cp="$(tr ':' '\n' < "$bundle/server/classpath.txt" | sed "s|^|$bundle/server/|" | paste -sd:)"
[[ -d "$root/gpu-bundle/server-overlay" ]] && server_cp="$root/gpu-bundle/server-overlay:$server_cp"

start_server() {  # name grpc_port http_port transports -> sets last_pid; 1 when not ready
  local log="$report/server-$1-${4//,/_}.log"
  (cd "$root" && exec "$java" -Xmx4g ${SERVER_JAVA_OPTS:-} -cp "$server_cp" "$(cat "$bundle/server/main-class.txt")" \
     --pega.device.backend="$backend" --pega.pool.size="$pool" --spring.grpc.server.host=127.0.0.1 \
     --spring.grpc.server.port="$2" --server.address=127.0.0.1 --server.port="$3" --pega.admin.token="$token" \
     --pega.pd.enabled=true --pega.pd.nics=lo --pega.pd.transports="$4" ${SERVER_ARGS:-}) > "$log" 2>&1 &
  last_pid=$!
  pids+=("$last_pid")
  for _ in $(seq 1 240); do
    if grep -q 'Started PegaServerApplication' "$log" 2>/dev/null; then
      grep -E 'cuda backend up|pool ready|push|Started PegaServerApplication' "$log" | head -8 | fence
      return 0
    fi
    kill -0 "$last_pid" 2>/dev/null || break
    sleep 0.5
  done
  tail -60 "$log" | fence
  return 1
}

for transports in ${TRANSPORTS:-tcp shm,self}; do
  step "Servers with pega.pd.transports=$transports (pool $pool each, backend $backend)"
  start_server prefill 50061 9101 "$transports" || { status=1; cleanup; continue; }
  start_server decode 50062 9102 "$transports" || { status=1; cleanup; continue; }

  step "$driver.py, transports $transports"
  base="$report/${driver//_/-}-${transports//,/_}"
  timeout "${PD_TIMEOUT:-900}" python3 "$here/$driver.py" --prefill 127.0.0.1:50061 --decode 127.0.0.1:50062 \
     --decode-http 127.0.0.1:9102 --admin-token "$token" --tokens "$tokens" --runs "$runs" \
     --label "$transports" --out "$base.json" ${PD_ARGS:-} > "$base.log" 2>&1
  rc=$?
  [[ $rc == 0 ]] || status=1
  cat "$base.log"
  { grep -E '^(PDPUSH|PDCONNECTOR|tokens|---|\||FAIL|Traceback|[A-Za-z]*Error)' "$base.log" || tail -40 "$base.log"; } | fence
  echo "(exit $rc)" >> "$md"

  step "Server shutdown ($transports)"
  cleanup
  grep -h -E 'WARN|ERROR' "$report"/server-*-"${transports//,/_}".log | grep -v -i deprecat | tail -15 | fence
done

printf '\nOverall: %s\n' "$([[ $status == 0 ]] && echo PASS || echo FAIL)" >> "$md"
echo "report: $md"
exit $status
