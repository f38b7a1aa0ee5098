#!/usr/bin/env bash
# End to end remote prefix fetch: node b fetches 1024 blocks of 64 KiB from node a (two pega-server jars and a
# metaserver, in two network namespaces joined by a veth pair where this machine allows it, over loopback otherwise),
# timed from the first QueryPrefetch to Ready, against the raw engine time of the same bytes between the same two
# sites (TransferThroughput). Prints the table of docs/transfer.md; the run is the pega-it class RemotePrefetchBench.
#
#   scripts/bench-remote-prefetch.sh                 # 5 rounds, 2 lanes, raw engine 5 s
#   ROUNDS=10 LANES=4 scripts/bench-remote-prefetch.sh
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
LANES=${LANES:-2}
RAW_SECONDS=${RAW_SECONDS:-5}

./mvnw -B -ntp -q -pl pega-it -am verify -Dspotless.check.skip=true \
  -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=RemotePrefetchBench -Dfailsafe.failIfNoSpecifiedTests=false \
  -Dpega.bench.rounds="$ROUNDS" -Dpega.bench.lanes="$LANES" -Dpega.bench.rawSeconds="$RAW_SECONDS" "$@"
cat pega-it/target/remote-prefetch-bench.md
