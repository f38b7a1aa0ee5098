/**
 * jcstress tests of the agents' command queue.
 */
@NullMarked
package io.pegaflow.concurrency.agent;

import org.jspecify.annotations.NullMarked;
