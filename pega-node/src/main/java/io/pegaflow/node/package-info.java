/**
 * The node: {@link io.pegaflow.node.NodeContext} says what one PegaFlow node is made of (pool, device backend, engine
 * settings, optional P2P transfers, remote tier and P/D push) and {@link io.pegaflow.node.PegaNode} builds it in
 * order and closes it in reverse, the way Aeron's {@code MediaDriver.Context} and {@code MediaDriver} do. Plain Java:
 * an application (the Spring Boot server, a benchmark, a test) fills the context from its own configuration.
 */
@NullMarked
package io.pegaflow.node;

import org.jspecify.annotations.NullMarked;
