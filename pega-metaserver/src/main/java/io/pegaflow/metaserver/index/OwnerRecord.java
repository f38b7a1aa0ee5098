package io.pegaflow.metaserver.index;

import io.pegaflow.metaserver.node.NodeSession;

/** One node holding one block: the session that announced it and when it last did (epoch ms, for the TTL). */
record OwnerRecord(NodeSession session, long registeredAtMs) {}
