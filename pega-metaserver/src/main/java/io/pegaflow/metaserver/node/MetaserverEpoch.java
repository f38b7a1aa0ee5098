package io.pegaflow.metaserver.node;

/**
 * The start epoch of this metaserver process: a database counter bumped at every start (shared by replicas on one
 * PostgreSQL database). Servers compare it with the last epoch they announced to; a change means the in-memory block
 * index was lost and they re-announce their resident blocks. The wire names are in
 * {@link io.pegaflow.proto.ext.MetaserverMetadata}.
 */
public record MetaserverEpoch(long epoch, long startedAtMs) {}
