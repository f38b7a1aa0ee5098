/**
 * Read-only snapshots of the push engine for the admin API, {@code /pd} and the dashboard: a leaf every other package
 * of the module may use, so the sides that fill it and the engine that hands it out do not depend on each other.
 */
@NullMarked
package io.pegaflow.push.view;

import org.jspecify.annotations.NullMarked;
