package io.pegaflow.metaserver.node;

import java.util.UUID;

/** A node_id that lost its address to {@code supersededBy} at {@code fencedAtMs} (table {@code meta_fenced_session}). */
public record FencedSession(UUID id, String url, long fencedAtMs, UUID supersededBy) {}
