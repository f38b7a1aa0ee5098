/**
 * jcstress tests of sealed blocks' reference counts.
 */
@NullMarked
package io.pegaflow.concurrency.block;

import org.jspecify.annotations.NullMarked;
