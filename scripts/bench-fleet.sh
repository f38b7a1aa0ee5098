#!/usr/bin/env bash
# Fleet simulation against freshly started metaservers: starts METASERVERS packaged metaservers on this machine
# (gRPC 50156, 50157, ...; HTTP 19092, 19093, ...; each its own H2 file unless METASERVER_ARGS points them at a shared
# database), waits for /health, runs io.pegaflow.bench.fleet.FleetSimulator against all of them with their pids for the
# memory probe, prints `uptime` before and after, and stops them. Extra arguments go to the simulator.
#
#   ./mvnw -q -B -ntp -pl pega-metaserver,pega-benchmarks -am package -DskipTests
#   scripts/bench-fleet.sh --nodes 100 --duration 60s --report fleet-100.md --plot fleet-100.svg
#   METASERVER_JAVA_OPTS="-XX:StartFlightRecording=filename=/tmp/ms.jfr,settings=profile" scripts/bench-fleet.sh --nodes 100
#   METASERVERS=2 METASERVER_ARGS="--spring.profiles.active=postgres --pega.metaserver.index=redis" \
#       scripts/bench-fleet.sh --nodes 1000 --duration 60s
set -euo pipefail
cd "$(dirname "$0")/.."

METASERVER_JAR=${METASERVER_JAR:-pega-metaserver/target/pega-metaserver.jar}
BENCH_JAR=${BENCH_JAR:-pega-benchmarks/target/benchmarks.jar}
METASERVERS=${METASERVERS:-1}
METASERVER_HEAP=${METASERVER_HEAP:-4g}
SIM_HEAP=${SIM_HEAP:-2g}
STALE_SECS=${STALE_SECS:-30}
WORK=${WORK:-$(mktemp -d /tmp/pega-fleet.XXXXXX)}
mkdir -p "$WORK"
JAVA=${JAVA:-java}
for jar in "$METASERVER_JAR" "$BENCH_JAR"; do
  [ -f "$jar" ] || { echo "build first: ./mvnw -q -B -ntp -pl pega-metaserver,pega-benchmarks -am package -DskipTests" >&2; exit 1; }
done

pids=()
stop_all() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done; }
trap stop_all EXIT

targets=(); metrics=()
for ((i = 0; i < METASERVERS; i++)); do
  grpc=$((50156 + i)); http=$((19092 + i))
  # shellcheck disable=SC2086
  "$JAVA" -Xmx"$METASERVER_HEAP" ${METASERVER_JAVA_OPTS:-} -jar "$METASERVER_JAR" \
    --pega.metaserver.addr=127.0.0.1:$grpc --pega.metaserver.http-addr=127.0.0.1:$http \
    --pega.metaserver.db-path="$WORK/db-$i/metaserver" --pega.metaserver.node-stale-secs="$STALE_SECS" \
    --logging.level.root=WARN ${METASERVER_ARGS:-} >"$WORK/metaserver-$i.log" 2>&1 &
  pids+=($!); targets+=("127.0.0.1:$grpc"); metrics+=("http://127.0.0.1:$http")
done
for ((i = 0; i < METASERVERS; i++)); do
  for _ in $(seq 1 180); do
    curl -fs "${metrics[$i]}/health" >/dev/null 2>&1 && break
    kill -0 "${pids[$i]}" 2>/dev/null || { cat "$WORK/metaserver-$i.log" >&2; exit 1; }
    sleep 1
  done
done
join() { local IFS=,; echo "$*"; }
echo "before: $(uptime)" >&2
rc=0
"$JAVA" -Xmx"$SIM_HEAP" -cp "$BENCH_JAR" io.pegaflow.bench.fleet.FleetSimulator \
  --targets "$(join "${targets[@]}")" --metrics "$(join "${metrics[@]}")" --gc-pids "$(join "${pids[@]}")" "$@" || rc=$?
echo "after: $(uptime)" >&2
echo "metaserver logs: $WORK" >&2
exit $rc
