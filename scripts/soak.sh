#!/usr/bin/env bash
# Soak (decision 0016 §5): a packaged pega-server under sustained mixed load with its pool under pressure,
# while a second client is SIGKILLed at random and restarted; samples the server's RSS, heap, threads and open file
# descriptors and fails when a loaded byte was wrong, an error was counted, or the server did not come back to its
# starting resources. A benchmark, not a CI test.
#
#   scripts/soak.sh [DURATION_S] [OUT_DIR]     # default 600 s, target/soak
#
# Needs the jars: ./mvnw -B -ntp -pl pega-server,pega-benchmarks -am package -DskipTests
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${1:-600}
OUT=${2:-target/soak}
GRPC=${SOAK_GRPC_PORT:-50175}
HTTP=${SOAK_HTTP_PORT:-19175}
POOL=${SOAK_POOL:-256MB}
SERVER_JAR=pega-server/target/pega-server.jar
BENCH_JAR=pega-benchmarks/target/benchmarks.jar
for j in "$SERVER_JAR" "$BENCH_JAR"; do
  [[ -f $j ]] || { echo "missing $j: ./mvnw -B -ntp -pl pega-server,pega-benchmarks -am package -DskipTests" >&2; exit 2; }
done
mkdir -p "$OUT"
rm -f "$OUT"/*.log "$OUT"/samples.csv "$OUT"/killed.txt

java -Xmx512m -jar "$SERVER_JAR" --pega.pool.size="$POOL" --spring.grpc.server.port="$GRPC" \
  --server.port="$HTTP" --server.address=127.0.0.1 --pega.device.backend=host \
  --management.endpoints.web.exposure.include=health,info,prometheus >"$OUT/server.log" 2>&1 &
SERVER=$!
KILLER=""
cleanup() {
  [[ -n $KILLER ]] && kill "$KILLER" 2>/dev/null || true
  kill "$SERVER" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
}
trap cleanup EXIT

for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$HTTP/actuator/health" >/dev/null 2>&1 && break
  sleep 1
done
curl -sf "http://127.0.0.1:$HTTP/actuator/health" >/dev/null || { echo "server did not start" >&2; tail -20 "$OUT/server.log"; exit 1; }

metric() { # the sum of a Prometheus sample's values, 0 when absent
  curl -sf "http://127.0.0.1:$HTTP/actuator/prometheus" | awk -v m="$1" 'index($0, m) == 1 { s += $NF } END { printf "%d", s }'
}
sample() {
  local t=$1 rss threads fds heap
  rss=$(awk '/^VmRSS/ { print $2 }' /proc/$SERVER/status)
  threads=$(awk '/^Threads/ { print $2 }' /proc/$SERVER/status)
  fds=$(ls /proc/$SERVER/fd | wc -l)
  heap=$(metric 'jvm_memory_used_bytes{area="heap"')
  echo "$t,$rss,$((heap / 1024)),$threads,$fds,$(metric 'pegaflow_pool_used_bytes'),$(awk '{ print $1 }' /proc/loadavg)" >>"$OUT/samples.csv"
}
echo "elapsed_s,rss_kib,heap_kib,threads,fds,pool_used_bytes,load1" >"$OUT/samples.csv"

LOADGEN=(java -Xmx512m -cp "$BENCH_JAR" io.pegaflow.bench.loadgen.LoadGenerator --target "127.0.0.1:$GRPC" --no-progress)
# A warm-up run creates the server's lazily started pools, so the baseline is taken against a working server.
"${LOADGEN[@]}" --workers 2 --duration 10s --mix request=1 --block-size 64KiB --blocks-per-request 16 \
  --prefixes 200 --instance-prefix warm >"$OUT/warmup.log" 2>&1
sleep 5
sample 0
threads_by_name() { sed 's/[0-9]\+/#/g' /proc/$SERVER/task/*/comm | sort | uniq -c; }
threads_by_name >"$OUT/threads-start.txt"
read -r _ BASE_RSS _ BASE_THREADS BASE_FDS _ < <(tail -1 "$OUT/samples.csv" | tr ',' ' ')

# The verifying client: every loaded byte is checked; its exit status is non-zero on any error or wrong byte.
"${LOADGEN[@]}" --workers 4 --duration "${DURATION}s" --mix save=1,query=1,load=1,request=2 --block-size 64KiB \
  --blocks-per-request 32 --prefixes 20000 --zipf 0.9 --instance-prefix soak --json "$OUT/soak.json" \
  >"$OUT/soak.log" 2>&1 &
MAIN=$!
sleep 10 # its workers have registered their device objects before the killed clients start making theirs
# The victim of random kills: a client that saves and loads like the others and is SIGKILLed 3-20 s into each run.
(
  i=0
  while true; do
    i=$((i + 1))
    "${LOADGEN[@]}" --workers 2 --duration 60s --mix save=2,load=1,request=1 --block-size 64KiB \
      --blocks-per-request 16 --prefixes 2000 --zipf 0.8 --instance-prefix "killed$i" --seed "$i" \
      >>"$OUT/killed-clients.log" 2>&1 &
    pid=$!
    echo "$pid" >"$OUT/killed.pid"
    sleep $((3 + RANDOM % 18))
    mine=$(grep -o '/dev/shm/pega_dev_[A-Za-z0-9_]*' "/proc/$pid/maps" 2>/dev/null | sort -u || true)
    kill -9 "$pid" 2>/dev/null && echo "$i $(date -u +%T)" >>"$OUT/killed.txt"
    wait "$pid" 2>/dev/null || true
    # A dead client cannot unlink its device objects; as its supervisor would, remove the ones it made.
    # (exactly those it had mapped, read from its /proc maps before the kill).
    [[ -n $mine ]] && rm -f $mine
  done
) &
KILLER=$!

START=$SECONDS
while kill -0 "$MAIN" 2>/dev/null; do
  sleep 30
  sample $((SECONDS - START))
done
MAIN_RC=0
wait "$MAIN" || MAIN_RC=$?
kill "$KILLER" 2>/dev/null || true
wait "$KILLER" 2>/dev/null || true
KILLER=""
[[ -f $OUT/killed.pid ]] && kill -9 "$(cat "$OUT/killed.pid")" 2>/dev/null || true

# Let the killed clients' instances end (their gRPC connections are gone) and the pool drain to the cache.
sleep 20
sample end
read -r _ END_RSS _ END_THREADS END_FDS _ < <(tail -1 "$OUT/samples.csv" | tr ',' ' ')
HEALTH=$(curl -s "http://127.0.0.1:$HTTP/actuator/health")
threads_by_name >"$OUT/threads-end.txt"
INSTANCES=$(curl -s "http://127.0.0.1:$HTTP/instances")

echo "== soak: ${DURATION}s, pool $POOL, $(wc -l <"$OUT/killed.txt" 2>/dev/null || echo 0) clients SIGKILLed"
tail -12 "$OUT/soak.log"
echo "server rss KiB ${BASE_RSS} -> ${END_RSS}, threads ${BASE_THREADS} -> ${END_THREADS}, fds ${BASE_FDS} -> ${END_FDS}"
echo "health: $HEALTH"
echo "instances still registered: $INSTANCES" | cut -c1-400
echo "threads by name, start -> end:"; diff "$OUT/threads-start.txt" "$OUT/threads-end.txt" || true
column -s, -t <"$OUT/samples.csv"
FAIL=0
[[ $MAIN_RC -eq 0 ]] || { echo "FAIL: the verifying client exited $MAIN_RC (errors or wrong bytes)"; FAIL=1; }
[[ $HEALTH == *'"status":"UP"'* ]] || { echo "FAIL: health is not UP"; FAIL=1; }
[[ $END_THREADS -le $((BASE_THREADS + 8)) ]] || { echo "FAIL: threads grew"; FAIL=1; }
[[ $END_FDS -le $((BASE_FDS + 16)) ]] || { echo "FAIL: file descriptors grew"; FAIL=1; }
exit $FAIL
