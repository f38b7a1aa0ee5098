/** Null-marked: types are non-null unless written {@code @Nullable} (docs/java-quality.md, NullAway). */
@NullMarked
package io.pegaflow.server.ssd;

import org.jspecify.annotations.NullMarked;
