package io.pegaflow.core.lease;

/**
 * One live lease as the admin surface shows it: never the whole id (it is the capability a load presents), only
 * enough of it to tell leases apart.
 *
 * @param idPrefix the first 8 hex digits of the lease id
 * @param consumersLeft loads that may still consume it
 * @param expiresInNanos time to its TTL at the moment of the snapshot, never negative
 */
public record LeaseSummary(String idPrefix, String instanceId, int blocks, int consumersLeft, long expiresInNanos) {}
