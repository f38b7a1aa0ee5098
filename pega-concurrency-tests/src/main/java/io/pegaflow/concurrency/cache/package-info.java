/**
 * jcstress tests of the RAM index's Caffeine policy: leases racing its evictions.
 */
@NullMarked
package io.pegaflow.concurrency.cache;

import org.jspecify.annotations.NullMarked;
