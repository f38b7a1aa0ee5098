/**
 * Choosing a device backend from configuration ({@code auto}, {@code cuda}, {@code host}): the one package that knows
 * both implementations, kept apart from {@code device} so the interface package imports neither of them.
 */
@NullMarked
package io.pegaflow.core.device.select;

import org.jspecify.annotations.NullMarked;
