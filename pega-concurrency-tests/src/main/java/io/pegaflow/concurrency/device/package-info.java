/**
 * jcstress tests of the device backend's mapping cache.
 */
@NullMarked
package io.pegaflow.concurrency.device;

import org.jspecify.annotations.NullMarked;
