/**
 * The ground floor of the house (the Agrona of PegaFlow): {@code agent} (agents, their runner, idle strategies,
 * command queues, the clock, periodic and task agents), {@code plan} (copy plans) and {@code memory} (what a pinned
 * region looks like to those who register it). Depends on the JDK and slf4j only.
 */
@NullMarked
package io.pegaflow.kernel;

import org.jspecify.annotations.NullMarked;
