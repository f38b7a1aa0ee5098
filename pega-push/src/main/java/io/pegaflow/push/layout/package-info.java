/**
 * Where pushed bytes live: the workers' registered push layers, the staging layout in the pool, and the handshakes
 * that tell a prefill server where to put.
 */
@NullMarked
package io.pegaflow.push.layout;

import org.jspecify.annotations.NullMarked;
