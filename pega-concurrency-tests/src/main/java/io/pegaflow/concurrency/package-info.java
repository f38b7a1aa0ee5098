/**
 * jcstress tests of pega-core's concurrency claims (docs/concurrency.md); this package holds the states' shared
 * fixtures: {@link io.pegaflow.concurrency.Pools} and {@link io.pegaflow.concurrency.WitnessedBlock}.
 */
@NullMarked
package io.pegaflow.concurrency;

import org.jspecify.annotations.NullMarked;
