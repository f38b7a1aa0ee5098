#!/usr/bin/env bash
# The GPU test run of pega-server's cuda backend, repeatable on any machine with an NVIDIA GPU, python3 with torch
# and grpcio, and no Java: the JRE, the server and the Java tests come from the bundle that scripts/device-bundle.sh
# builds (gpu-bundle/pega-gpu-bundle.tar.xz).
#
#   gpu-tests/run.sh [REPORT_DIR]          (default gpu-tests/report)
#
# Steps, each logged into REPORT_DIR/report.md:
#   1. environment (GPUs, driver, torch, grpc)
#   2. the Java CUDA tests, GPU-tagged ones included (bindings, restricted unpickler, backend against a torch
#      producer process, copier throughput, pool readiness)                        -> junit.txt, java-bench.md
#   then for each copy mode in MODES (default "auto"), pega-server with pega.device.backend=cuda and
#   pega.cuda.copy-mode=MODE, and against it:
#   3. e2e_test.py: the reference connector's calls over gRPC, every layout, Session, errors, TP=2, SIGKILL, two
#      workers saving and loading at once (later modes: the layouts and the two workers only)  -> e2e-MODE.json
#   4. prefix_e2e.py (first mode only): a 10k-token Qwen3-8B prefix, Save then Query + Load       -> prefix-MODE.json
#   5. bandwidth.py: Qwen3-8B layouts, Save/Load/both vs torch's contiguous copy in the same run -> bandwidth-MODE.json
#   5b. hybrid_e2e.py (first mode only): a hybrid model's worker as pegaflow-llm 0.25.1 drives it (attention layers
#      plus recurrent-state layers of another page size, layer_group_ids), both groups byte-exact, Save/Load GB/s
#                                                                                                  -> hybrid-MODE.json
#   5c. link_bench.py (first mode only): Save / Query+Load of the bandwidth layouts and a 10k-token prefix through the
#      Python client and the compiled one (LinkBench, the bundle's bench/ jars on the server's classpath), cold first Save, the
#      server's time per phase, torch's contiguous copy                                            -> link-MODE.json
#   5d. rpc_overhead.py (first mode only): client vs server handler time, empty RPCs to 1 GiB Saves and Loads, the
#      server's phase breakdown                                                               -> rpc_overhead.json
#   then, with servers of its own:
#   6. restart_e2e.py: a torch worker registered through CUDA IPC outlives a SIGKILLed pega-server; a new one on the
#      same pega.state.dir and SSD shard restores it, and its next QueryPrefetch/Load are served from SSD byte-exact
#      (first start, SIGKILL -> Health, restore, first QueryPrefetch, next Load times)     -> restart.json
# Environment: PEGA_BUNDLE (bundle file), POOL_SIZE (default 32GB), GRPC_PORT (50055), HTTP_PORT (9091),
#              MODES ("auto batch kernel per-range"), E2E_ONLY (scenario names, first mode), SKIP_JUNIT=1, SKIP_E2E=1, SKIP_PREFIX=1, PREFIX_ARGS (e.g. "--warmup 0"), SKIP_BANDWIDTH=1, SKIP_HYBRID=1, HYBRID_ARGS (e.g. "--runs 5"),
#              SKIP_RESTART=1, RESTART_POOL_SIZE (4GB), RESTART_SSD_CAPACITY (1GB), RESTART_ONLY=1 (only steps 1 and 6),
#              BACKEND=host + E2E_KIND=host (no-GPU dry run), JUNIT_CLASSES="fully.qualified.Test ..." (only those),
#              JUNIT_JAVA_OPTS (e.g. -Dpega.gpu.tuning=1 for the copy tuning sweeps), SERVER_JAVA_OPTS
#              (e.g. -Dpega.cuda.blockingSync=true), SERVER_ARGS (more --key=value), BANDWIDTH_ARGS (e.g.
#              "--layouts kv16 --runs 5"; later modes: BANDWIDTH_ARGS_OTHER_MODES, default "--layouts kv16,bf16 --runs 2"), SKIP_LINK=1, LINK_ARGS
#              (e.g. "--layouts kv16,prefix --runs 5"), SKIP_RPC_OVERHEAD=1; gpu-bundle/test-overlay and
#              gpu-bundle/server-overlay, when present, hold classes compiled after the bundle and come first on the
#              classpaths.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
report="$(mkdir -p "${1:-$here/report}" && cd "${1:-$here/report}" && pwd)"
bundle_file="${PEGA_BUNDLE:-$root/gpu-bundle/pega-gpu-bundle.tar.xz}"
bundle="${PEGA_BUNDLE_DIR:-/tmp/pega-gpu-bundle}"
pool="${POOL_SIZE:-32GB}"
backend="${BACKEND:-cuda}"   # host: debug this script on a machine without a GPU (with E2E_KIND=host)
grpc_port="${GRPC_PORT:-50055}"
http_port="${HTTP_PORT:-9091}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
md="$report/report.md"
scratch="$(mktemp -d /tmp/pega-gpu-run.XXXXXX)"   # logs already copied into report.md
status=0
# Only the environment and the restart step: no JUnit, no copy-mode servers.
[[ "${RESTART_ONLY:-0}" == 1 ]] && { SKIP_JUNIT=1; MODES=" "; }
step() { echo; echo "== $*"; echo "" >> "$md"; echo "## $*" >> "$md"; echo "" >> "$md"; }
fence() { echo '```' >> "$md"; cat >> "$md"; echo '```' >> "$md"; }

echo "# pega-server GPU run, $(date -u +%Y-%m-%dT%H:%MZ)" > "$md"
echo "" >> "$md"
echo "Command: \`gpu-tests/run.sh\` (POOL_SIZE=$pool MODES=${MODES:-auto}${JUNIT_JAVA_OPTS:+ JUNIT_JAVA_OPTS=$JUNIT_JAVA_OPTS}${SERVER_JAVA_OPTS:+ SERVER_JAVA_OPTS=$SERVER_JAVA_OPTS}${BANDWIDTH_ARGS:+ BANDWIDTH_ARGS=$BANDWIDTH_ARGS}${JUNIT_CLASSES:+ JUNIT_CLASSES=$JUNIT_CLASSES})" >> "$md"

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
  [[ -d "$root/gpu-bundle/test-overlay" ]] && test_cp="$root/gpu-bundle/test-overlay:$test_cp"
  : > "$report/java-bench.md"
  (cd "$root" && timeout "${JUNIT_TIMEOUT:-400}" "$java" -Xmx6g ${JUNIT_JAVA_OPTS:-} -Dlogback.configurationFile="$here/java/logback-gpu.xml" -Dpega.gpu.report="$report/java-bench.md" -Dpega.gpuTests.dir="$here" \
     -Dpega.gpu.poolGiB="${POOL_READINESS_GIB:-8}" -cp "$test_cp" GpuTestMain "$scratch/junit.txt" ${JUNIT_CLASSES:-}) > "$report/junit.log" 2>&1
  rc=$?
  [[ $rc == 0 ]] || status=1
  { grep -E '^(PASS|FAIL|SKIP|tests found)' "$scratch/junit.txt" 2>/dev/null | grep -v '^PASS CudaIpcWrapperUnpicklerTest'  || tail -50 "$report/junit.log"; } | fence
  echo "(exit $rc)" >> "$md"
  cat "$report/java-bench.md" >> "$md"
fi

start_server() {  # copy mode
  server_cp="$(tr ':' '\n' < "$bundle/server/classpath.txt" | sed "s|^|$bundle/server/|" | paste -sd:)"
  [[ -d "$root/gpu-bundle/server-overlay" ]] && server_cp="$root/gpu-bundle/server-overlay:$server_cp"
  t0=$(date +%s.%N)
  (cd "$root" && exec "$java" -Xmx4g ${SERVER_JAVA_OPTS:-} -cp "$server_cp" "$(cat "$bundle/server/main-class.txt")" \
     --pega.device.backend="$backend" --pega.pool.size="$pool" --spring.grpc.server.port="$grpc_port" \
     --server.address=127.0.0.1 --server.port="$http_port" --pega.cuda.copy-mode="$1" ${SERVER_ARGS:-}) > "$report/server-$1.log" 2>&1 &
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
    grep -E 'cuda backend up|cuda device|copy mode|batched copies|pool ready|Started PegaServerApplication|ERROR|Exception' "$report/server-$1.log" | head -20
  } | fence
  if [[ $ready != 1 ]]; then
    tail -60 "$report/server-$1.log" | fence
    kill $server_pid 2>/dev/null
    return 1
  fi
}

stop_server() {  # copy mode
  kill -TERM $server_pid 2>/dev/null
  for _ in $(seq 1 60); do kill -0 $server_pid 2>/dev/null || break; sleep 0.5; done
  kill -0 $server_pid 2>/dev/null && kill -KILL $server_pid
  grep -E 'WARN|ERROR' "$report/server-$1.log" | grep -v -i 'deprecat' | tail -15 | fence
}

first=1
for mode in ${MODES:-auto}; do
  step "pega-server (pega.device.backend=$backend, pool $pool, pega.cuda.copy-mode=$mode)"
  start_server "$mode" || { status=1; continue; }

  if [[ "${SKIP_E2E:-0}" != 1 ]]; then
    step "End-to-end, copy mode $mode (e2e_test.py, reference connector calls over gRPC)"
    only=""
    [[ -n "${E2E_ONLY:-}" ]] && only="--only $E2E_ONLY"
    [[ $first == 1 ]] || only="--only layouts_roundtrip_bit_for_bit,concurrent_save_load_two_workers"
    timeout "${E2E_TIMEOUT:-200}" python3 "$here/e2e_test.py" --kind "${E2E_KIND:-cuda}" --addr "127.0.0.1:$grpc_port" $only --out "$report/e2e-$mode.json" > "$scratch/e2e.log" 2>&1
    rc=$?
    [[ $rc == 0 ]] || status=1
    cat "$scratch/e2e.log" | fence
  fi

  if [[ "${SKIP_PREFIX:-0}" != 1 && $first == 1 ]]; then
    step "A 10k-token Qwen3-8B prefix through the server, copy mode $mode (prefix_e2e.py)"
    timeout 200 python3 "$here/prefix_e2e.py" --addr "127.0.0.1:$grpc_port" ${PREFIX_ARGS:-} --out "$report/prefix-$mode.json" > "$scratch/prefix.log" 2>&1
    [[ $? == 0 ]] || status=1
    tail -8 "$scratch/prefix.log" | fence
  fi

  if [[ "${SKIP_HYBRID:-0}" != 1 && $first == 1 ]]; then
    step "A hybrid model's two cache groups through the server, copy mode $mode (hybrid_e2e.py)"
    timeout "${HYBRID_TIMEOUT:-300}" python3 "$here/hybrid_e2e.py" --kind "${E2E_KIND:-cuda}" --addr "127.0.0.1:$grpc_port" ${HYBRID_ARGS:-} --out "$report/hybrid-$mode.json" > "$scratch/hybrid.log" 2>&1
    [[ $? == 0 ]] || status=1
    tail -12 "$scratch/hybrid.log" | fence
  fi

  if [[ "${SKIP_BANDWIDTH:-0}" != 1 ]]; then
    step "Bandwidth through the server, copy mode $mode (bandwidth.py, against torch's contiguous copy in the same run)"
    timeout "${BANDWIDTH_TIMEOUT:-300}" python3 "$here/bandwidth.py" --addr "127.0.0.1:$grpc_port" --http "127.0.0.1:$http_port" --label "$mode" $([[ $first == 1 ]] && echo "${BANDWIDTH_ARGS:-}" || echo "${BANDWIDTH_ARGS_OTHER_MODES:---layouts kv16,bf16 --runs 2}") --out "$report/bandwidth-$mode.json" > "$scratch/bandwidth.log" 2>&1
    rc=$?
    [[ $rc == 0 ]] || status=1
    [[ $rc == 0 ]] || tail -30 "$scratch/bandwidth.log" | fence
    [[ -f "$report/bandwidth-$mode.json" ]] && python3 - "$report/bandwidth-$mode.json" >> "$md" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"GPU: {d['gpu']}, torch {d['torch']}, copy mode {d['label']}; 36 layers, scattered block ids, median of runs, GB/s = 1e9 B/s; ratio = server / torch contiguous copy of the same bytes\n")
print("Save and Load are what the Python client sees; engine Save / Load are the server's own pegaflow_save_duration and pegaflow_load_duration over the same calls, Save RPC its pegaflow_rpc_duration{method=save}.\n")
print("| layout | ranges | GB | Save | ratio | Load | ratio | Save+Load at once | ratio | torch D2H / H2D / both | engine Save / Save RPC / engine Load | loads not bit-exact |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in d["results"]:
    print(f"| {r['description']} | {r['ranges_per_request']} | {r['bytes'] / 1e9:.2f} | {r['save_GBps']} | {r['save_ratio']} | "
          f"{r['load_GBps']} | {r['load_ratio']} | {r['both_GBps']} | {r['both_ratio']} | "
          f"{r['torch_d2h_GBps']} / {r['torch_h2d_GBps']} / {r['torch_both_GBps']} | "
          f"{r.get('engine_save_GBps', '-')} / {r.get('rpc_save_GBps', '-')} / {r.get('engine_load_GBps', '-')} | {r['load_mismatches']} |")
PY
  fi

  if [[ "${SKIP_LINK:-0}" != 1 && $first == 1 ]]; then
    step "Save and Load as a Python and a compiled client see them, copy mode $mode (link_bench.py, LinkBench)"
    bench_cp="$(ls "$bundle"/bench/*.jar 2>/dev/null | paste -sd:)"
    if [[ -n "$bench_cp" ]]; then
      timeout "${LINK_TIMEOUT:-900}" python3 "$here/link_bench.py" --kind "${E2E_KIND:-cuda}" --addr "127.0.0.1:$grpc_port" \
        --http "127.0.0.1:$http_port" --java "$java -Xmx2g -cp $bench_cp:$server_cp" ${LINK_ARGS:-} \
        --out "$report/link-$mode.json" > "$scratch/link.log" 2>&1
      rc=$?
      [[ $rc == 0 ]] || status=1
      { [[ $rc == 0 ]] || tail -40 "$scratch/link.log"; } | fence
      [[ -f "$report/link-$mode.json" ]] && python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['table'])" "$report/link-$mode.json" >> "$md"
    else
      echo "no bench/ jars in the bundle (rebuild it with scripts/device-bundle.sh): skipped" | tee -a "$md"
    fi
  fi

  if [[ "${SKIP_RPC_OVERHEAD:-0}" != 1 && $first == 1 ]]; then
    step "RPC overhead (rpc_overhead.py: client time vs the server's handler time, the server's phases)"
    timeout 300 python3 "$here/rpc_overhead.py" --kind "${E2E_KIND:-cuda}" --addr "127.0.0.1:$grpc_port" --http "127.0.0.1:$http_port" ${RPC_OVERHEAD_ARGS:-} --out "$report/rpc_overhead.json" > "$scratch/ovh.log" 2>&1
    [[ $? == 0 ]] || status=1
    cat "$scratch/ovh.log" | fence
  fi

  step "Server shutdown ($mode)"
  stop_server "$mode"
  first=0
done

if [[ "${SKIP_RESTART:-0}" != 1 ]]; then
  step "Restart under a live worker (restart_e2e.py: SIGKILL, restore from pega.state.dir, SSD warm)"
  server_cp="$(tr ':' '\n' < "$bundle/server/classpath.txt" | sed "s|^|$bundle/server/|" | paste -sd:)"
  [[ -d "$root/gpu-bundle/server-overlay" ]] && server_cp="$root/gpu-bundle/server-overlay:$server_cp"
  (cd "$root" && timeout "${RESTART_TIMEOUT:-400}" python3 "$here/restart_e2e.py" --kind "${E2E_KIND:-cuda}" --backend "$backend" \
     --server-cmd "$java -Xmx4g ${SERVER_JAVA_OPTS:-} -cp $server_cp $(cat "$bundle/server/main-class.txt")" \
     --server-args="${SERVER_ARGS:-}" --grpc-port "$grpc_port" --http-port "$http_port" --ssd-capacity "${RESTART_SSD_CAPACITY:-1GB}" \
     --pool-size "${RESTART_POOL_SIZE:-4GB}" --log-dir "$report" --out "$report/restart.json") > "$scratch/restart.log" 2>&1
  rc=$?
  [[ $rc == 0 ]] || status=1
  tail -40 "$scratch/restart.log" | fence
  echo "(exit $rc; server logs: restart-server-1.log, restart-server-2.log)" >> "$md"
fi

echo "" >> "$md"
echo "Overall: $([[ $status == 0 ]] && echo PASS || echo FAIL)" >> "$md"
echo "report: $md"
exit $status
