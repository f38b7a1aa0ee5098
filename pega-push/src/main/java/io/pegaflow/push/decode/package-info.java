/**
 * The decode role: receives announced by a prefill server, their pool staging, and the receive agent that copies
 * arrived layers to the decode worker's device memory and signals its load_state.
 */
@NullMarked
package io.pegaflow.push.decode;

import org.jspecify.annotations.NullMarked;
