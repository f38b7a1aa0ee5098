/**
 * The fleet simulator ({@link io.pegaflow.bench.fleet.FleetSimulator}): hundreds to thousands of simulated servers
 * speaking the metaserver protocol from one JVM, and its report. docs/metaserver.md has the commands and figures.
 */
@NullMarked
package io.pegaflow.bench.fleet;

import org.jspecify.annotations.NullMarked;
