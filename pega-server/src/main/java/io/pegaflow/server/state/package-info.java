/**
 * Restarting the server without restarting its workers (decision 0010): {@code pega.state.*}, the registration
 * journal's bean, and the restore of journaled registrations that runs after the HTTP port and before the gRPC port
 * opens. See docs/operations.md "Restarting the server" and docs/decisions/0010-restart.md.
 */
@NullMarked
package io.pegaflow.server.state;

import org.jspecify.annotations.NullMarked;
