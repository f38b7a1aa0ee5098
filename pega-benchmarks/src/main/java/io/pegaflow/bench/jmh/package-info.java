/**
 * JMH benchmarks of the engine's CPU path, the Java equivalents of the reference's
 * {@code pegaflow-core/benches/cpu_path.rs} (novitalabs/pegaflow v0.22.4). Run them from
 * {@code pega-benchmarks/target/benchmarks.jar}; docs/benchmarks.md lists the commands and the figures.
 */
@NullMarked
package io.pegaflow.bench.jmh;

import org.jspecify.annotations.NullMarked;
