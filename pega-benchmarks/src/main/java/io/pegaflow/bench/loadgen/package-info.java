/**
 * The end-to-end load generator ({@link io.pegaflow.bench.loadgen.LoadGenerator}): simulated workers over gRPC, a
 * Zipf mix of Save, QueryPrefetch and Load, and its reports (table, JSON, SVG). docs/benchmarks.md has the commands.
 */
@NullMarked
package io.pegaflow.bench.loadgen;

import org.jspecify.annotations.NullMarked;
