package io.pegaflow.metaserver.node;

import java.util.UUID;

/** The persisted current session of one node address (table {@code meta_node}); times in epoch milliseconds. */
public record NodeRow(String url, UUID id, long registeredAtMs, long lastSeenMs, long takeovers) {}
