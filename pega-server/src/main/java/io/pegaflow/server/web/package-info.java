/**
 * The reference's HTTP operations surface ({@code /health}, {@code /metrics}, {@code /instances}, the cleanup
 * endpoints) and the filter that holds mutating actuator calls to the admin rule. Null-marked: types are non-null
 * unless written {@code @Nullable} (docs/java-quality.md, NullAway).
 */
@NullMarked
package io.pegaflow.server.web;

import org.jspecify.annotations.NullMarked;
