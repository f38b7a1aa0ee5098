/**
 * jcstress tests of the pinned pool: allocations, frees and their merging, pinned allocations' reference counts.
 */
@NullMarked
package io.pegaflow.concurrency.memory;

import org.jspecify.annotations.NullMarked;
