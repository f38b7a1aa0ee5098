/**
 * jcstress tests of the lease table: consume against release and against the expiry sweep.
 */
@NullMarked
package io.pegaflow.concurrency.lease;

import org.jspecify.annotations.NullMarked;
