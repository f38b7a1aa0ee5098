#!/usr/bin/env bash
# Transfer engine get throughput against ucx_perftest (Debian's ucx-utils) on the same transport, in the same run:
# for each transport and operation size, ucx_perftest -t ucp_get between two processes, then the engine between two
# JVMs (TransferThroughput target/initiator) with 1, 2 and 4 connections per peer. Prints one table (MiB/s).
#
#   ./mvnw -q -B -ntp -pl pega-benchmarks -am package -DskipTests
#   scripts/bench-transfer.sh                      # tcp and shm over lo, 4 MiB and 64 KiB, 5 s per point
#   TRANSPORTS="tcp" SECONDS_PER_POINT=10 scripts/bench-transfer.sh
#   FOOTPRINTS="perftest pool" scripts/bench-transfer.sh   # engine ops on ucx_perftest's one buffer, or spread as pool
#                                                          # traffic is (TransferThroughput --footprint); default both
set -euo pipefail
cd "$(dirname "$0")/.."

JAR=pega-benchmarks/target/benchmarks.jar
TRANSPORTS=${TRANSPORTS:-"tcp shm"}
SIZES=${SIZES:-"4194304 65536"}
LANES=${LANES:-"1 2 4"}
SECONDS_PER_POINT=${SECONDS_PER_POINT:-5}
FOOTPRINTS=${FOOTPRINTS:-"perftest pool"}
NICS=${NICS:-lo}
PORT=${PORT:-13391}
JAVA=${JAVA:-java}
CP=${CP:-$JAR} # or a plain class path of the transfer jars, as on a machine without the shaded jar
[ -n "${CP#"$JAR"}" ] || [ -f "$JAR" ] || { echo "build first: ./mvnw -q -B -ntp -pl pega-benchmarks -am package -DskipTests" >&2; exit 1; }
command -v ucx_perftest >/dev/null || { echo "ucx_perftest missing: apt-get install -y ucx-utils" >&2; exit 1; }

# shm for the engine is UCX_TLS=shm,self; ucx_perftest names the same transports
ucx_tls() { [ "$1" = shm ] && echo "shm,self" || echo "$1"; }

# ucx_perftest keeps as many gets outstanding (-O) as the engine does: two 16 MiB batches
perftest() { # transport size -> MiB/s (overall bandwidth of the final line)
  local tls size iters outstanding out
  tls=$(ucx_tls "$1"); size=$2
  outstanding=$(( 32 * 1024 * 1024 / size ))
  iters=$(( (SECONDS_PER_POINT * 512 * 1024 * 1024) / size )); [ "$iters" -gt 500000 ] && iters=500000
  UCX_TLS=$tls UCX_NET_DEVICES=$NICS ucx_perftest -t ucp_get -s "$size" -n "$iters" -w 50 -O "$outstanding" \
    -p "$PORT" -f -v >/dev/null 2>&1 &
  local server=$!
  sleep 1
  out=$(UCX_TLS=$tls UCX_NET_DEVICES=$NICS ucx_perftest 127.0.0.1 -t ucp_get -s "$size" -n "$iters" -w 50 \
    -O "$outstanding" -p "$PORT" -f -v 2>/dev/null | grep -E '^ *[0-9]' | tail -1)
  wait "$server" || true
  # CSV: iterations, typical lat, avg lat, overall lat, avg bw, overall bw, avg rate, overall rate
  echo "$out" | awk -F, '{ printf "%.1f", $6 }'
}

engine() { # transport lanes footprint -> lines "size,MiB/s"
  local tls dir
  tls=$(ucx_tls "$1")
  dir=$(mktemp -d /tmp/pega-transfer-bench.XXXXXX)
  UCX_LOG_LEVEL=error "$JAVA" -Xmx512m -cp "$CP" io.pegaflow.bench.transfer.TransferThroughput target \
    --dir "$dir" --nics "$NICS" --tls "$tls" --lanes "$2" >"$dir/target.log" 2>&1 &
  local target=$!
  UCX_LOG_LEVEL=error "$JAVA" -Xmx512m -cp "$CP" io.pegaflow.bench.transfer.TransferThroughput initiator \
    --dir "$dir" --nics "$NICS" --tls "$tls" --lanes "$2" --sizes "$(echo "$SIZES" | tr ' ' ',')" \
    --footprint "$3" --seconds "$SECONDS_PER_POINT" 2>"$dir/initiator.log" | grep -E '^[a-z]' | awk -F, '{ print $(NF-2) "," $(NF-1) }' \
    || { echo "initiator failed ($1, N=$2, $3):" >&2; tail -20 "$dir/initiator.log" >&2; }
  wait "$target" || { echo "target failed:" >&2; tail -20 "$dir/target.log" >&2; }
  rm -rf "$dir"
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), NICS=$NICS, ${SECONDS_PER_POINT}s per point"
printf '| transport | op size | ucx_perftest MiB/s | engine footprint |'; for n in $LANES; do printf ' engine N=%s MiB/s (%% of perftest) |' "$n"; done; echo
printf '|---|---:|---:|---|'; for _ in $LANES; do printf '%s' '---:|'; done; echo
for t in $TRANSPORTS; do
  declare -A results=()
  for f in $FOOTPRINTS; do
    for n in $LANES; do
      while IFS=, read -r size mib; do results["$f,$n,$size"]=$mib; done < <(engine "$t" "$n" "$f")
    done
  done
  for size in $SIZES; do
    base=$(perftest "$t" "$size")
    for f in $FOOTPRINTS; do
      printf '| %s | %s KiB | %s | %s |' "$t" "$((size / 1024))" "$base" "$f"
      for n in $LANES; do
        v=${results["$f,$n,$size"]:-n/a}
        pct=$(awk -v v="$v" -v b="$base" 'BEGIN { if (b > 0 && v+0 > 0) printf "%.0f", 100 * v / b; else print "n/a" }')
        printf ' %s (%s%%) |' "$v" "$pct"
      done
      echo
    done
  done
  unset results
done
