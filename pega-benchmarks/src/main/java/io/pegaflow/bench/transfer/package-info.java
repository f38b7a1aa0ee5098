/**
 * Transfer engine throughput between two processes ({@link io.pegaflow.bench.transfer.TransferThroughput}), set
 * against {@code ucx_perftest} by {@code scripts/bench-transfer.sh}.
 */
@NullMarked
package io.pegaflow.bench.transfer;

import org.jspecify.annotations.NullMarked;
