/** The memcpy fabric of one JVM, for tests: {@link io.pegaflow.transfer.loopback.LoopbackTransferEngine}. */
@NullMarked
package io.pegaflow.transfer.loopback;

import org.jspecify.annotations.NullMarked;
