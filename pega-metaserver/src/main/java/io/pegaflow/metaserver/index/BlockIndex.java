package io.pegaflow.metaserver.index;

import com.google.protobuf.ByteString;
import io.pegaflow.metaserver.node.NodeSession;
import java.util.List;
import java.util.UUID;

/**
 * The block-owner index, {@code (namespace, hash) -> owners}, behind {@code pega.metaserver.index}: {@code memory}
 * ({@link BlockOwnerIndex}, this process's heap, rebuilt by re-announcement) or {@code redis}
 * ({@link RedisBlockIndex}, shared by every metaserver instance and surviving their restarts). Both give the same
 * answers to the same calls; the contract is the shared test of both ({@code BlockIndexContractTest}).
 *
 * <p>Writes are idempotent: an Insert repeated after a failover leaves one record per address, a repeated Remove
 * removes nothing more. Times are epoch milliseconds of the injected clock.
 */
public interface BlockIndex extends AutoCloseable {

    /**
     * InsertBlockHashes after the fence: records {@code session} as an owner of every hash, replacing a record of an
     * older session of the same address; past the session's share its own oldest records go. Returns
     * {@code hashes.size()}, as the reference does.
     */
    int insert(String namespace, List<ByteString> hashes, NodeSession session, long nowMs);

    /** RemoveBlockHashes after the fence: removes the records of {@code url} written under {@code id}; returns how many. */
    int remove(String namespace, List<ByteString> hashes, String url, UUID id);

    /** QueryPrefixBlocks: each visible node's contiguous prefix from hash 0, in order of first appearance. */
    List<PrefixMatch> queryPrefix(String namespace, List<ByteString> hashes, long nowMs);

    /** UnregisterNode: removes every record of {@code url} written under {@code id}; returns how many. */
    long removeOwners(String url, UUID id);

    /** Drops records of ended sessions, of nodes silent past the TTL and records older than the TTL. */
    SweepStats sweep(long nowMs);

    /** Indexed keys (approximate). */
    long keyCount();

    /** Owner records across all keys. */
    long ownerCount();

    /** Owner records {@code session} holds in the index. */
    long ownedBlocks(NodeSession session);

    /** Keys dropped by the index's own size bound (the memory backend's {@code max-blocks}). */
    long evictedKeys();

    /** Owner records a node lost to its own newer announcements past its share. */
    long shareEvictedRecords();

    /**
     * The epoch servers compare with the one they last announced to: when it changes they re-announce every block.
     * The memory backend answers this process's start epoch (its index starts empty); the Redis backend answers an
     * epoch kept in Redis, equal on every instance, that changes only when Redis lost the index.
     */
    long epoch();

    /** {@code memory} or {@code redis}, for logs and {@code /api/nodes}. */
    String backend();

    /**
     * Called every {@code node-refresh-secs}: re-reads state other instances share (the Redis backend checks that its
     * epoch survived, and publishes a new one when Redis lost the index).
     */
    default void refresh() {}

    /** Runs pending maintenance now (the memory backend's size eviction); tests use it to observe the bounds. */
    default void cleanUp() {}

    @Override
    default void close() {}
}
