/** The memcpy fabric of one JVM, for tests: {@link io.pegaflow.transfer.loopback.LoopbackTransferEngine}. */
package io.pegaflow.transfer.loopback;
