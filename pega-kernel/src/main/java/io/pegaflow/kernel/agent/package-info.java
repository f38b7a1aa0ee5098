/** Null-marked: types are non-null unless written {@code @Nullable} (docs/java-quality.md, NullAway). */
@NullMarked
package io.pegaflow.kernel.agent;

import org.jspecify.annotations.NullMarked;
