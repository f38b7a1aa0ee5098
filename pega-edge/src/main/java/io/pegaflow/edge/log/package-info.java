/**
 * Log lines that no client can forge: every argument of every log message is escaped and bounded on its way to the
 * console or file (docs/decisions/0023).
 */
@NullMarked
package io.pegaflow.edge.log;

import org.jspecify.annotations.NullMarked;
