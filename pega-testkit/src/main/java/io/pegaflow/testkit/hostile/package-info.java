/**
 * The hostile-input property tests' shared parts: seeded case streams, the seed in every failure, and generators of
 * edge numbers, control-character strings and bounded sizes (decision 0020).
 */
@NullMarked
package io.pegaflow.testkit.hostile;

import org.jspecify.annotations.NullMarked;
