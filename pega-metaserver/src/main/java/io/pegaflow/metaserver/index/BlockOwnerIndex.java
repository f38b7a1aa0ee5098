package io.pegaflow.metaserver.index;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.google.protobuf.ByteString;
import io.pegaflow.metaserver.node.NodeSession;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * The block-owner index: {@code (namespace, hash) -> owners}, soft state in memory, rebuilt by servers re-announcing
 * after a restart.
 *
 * <p><b>Structure.</b> A Caffeine cache bounded by {@code maxBlocks} keys, so a flood of announcements cannot exhaust
 * the heap; an evicted key only costs peers a miss. The TTL is enforced per owner record by {@link #sweep}, not by
 * Caffeine: an expiring cache reads its ticker and updates expiry order on every get, which tripled the cost of a
 * 32768-hash query. Each value is an immutable {@link OwnerRecord} array (one record per node address, typically a
 * handful), replaced inside the cache's per-key atomic {@code compute}, so readers never lock and a concurrent remove
 * by A and insert by B on one key always leaves B's record.
 *
 * <p><b>Shares.</b> The Caffeine bound picks its victims across all nodes, so one client inserting fresh hashes from
 * its own node could evict every other node's keys. Each node session therefore owns at most
 * {@code maxBlocksPerNode} records: an insert that takes it past that removes the node's own oldest records first
 * (FIFO of what it announced), and no other node's. {@code maxBlocks} stays as the heap's backstop for many nodes at
 * their full share.
 *
 * <p><b>Visibility.</b> A record points at the {@link NodeSession} that wrote it; the record is visible while that
 * session is current and fresh. Superseded, unregistered and silent nodes are therefore hidden at once, without
 * touching their records; the sweep removes them later.
 *
 * <p>Thread-safe. Times are epoch milliseconds from the injected clock.
 */
public final class BlockOwnerIndex implements BlockIndex {

    private final ConcurrentMap<BlockKey, OwnerRecord[]> owners;
    private final Cache<BlockKey, OwnerRecord[]> cache;
    private final long staleAfterMs;
    private final long ttlMs;
    private final LongAdder ownerCount = new LongAdder();
    private final LongAdder evictedKeys = new LongAdder();
    private final LongAdder shareEvictedRecords = new LongAdder();
    private final long maxBlocksPerNode;
    private final long epoch;
    // per node session, the records it announced in order; entries whose record was replaced or removed meanwhile are
    // skipped when reached and compacted away when they outnumber the live ones
    private final Map<NodeSession, ArrayDeque<OwnerRecord>> announced = new ConcurrentHashMap<>();

    private static final long FIFO_COMPACTION_FLOOR = 1_024;

    /** An index without node shares: only the size bound evicts (tests of the bound itself). */
    public BlockOwnerIndex(long maxBlocks, long staleAfterMs, long ttlMs) {
        this(maxBlocks, Long.MAX_VALUE, staleAfterMs, ttlMs);
    }

    /**
     * @param maxBlocks bound on keys in the index
     * @param maxBlocksPerNode bound on the records one node session owns; its own oldest go first past it
     */
    public BlockOwnerIndex(long maxBlocks, long maxBlocksPerNode, long staleAfterMs, long ttlMs) {
        this(maxBlocks, maxBlocksPerNode, staleAfterMs, ttlMs, 0);
    }

    /** @param epoch this process's start epoch: the index starts empty with the process */
    public BlockOwnerIndex(long maxBlocks, long maxBlocksPerNode, long staleAfterMs, long ttlMs, long epoch) {
        this.epoch = epoch;
        if (maxBlocksPerNode <= 0) {
            throw new IllegalArgumentException("max blocks per node: " + maxBlocksPerNode + " (expected: > 0)");
        }
        this.maxBlocksPerNode = maxBlocksPerNode;
        this.staleAfterMs = staleAfterMs;
        this.ttlMs = ttlMs;
        this.cache = Caffeine.newBuilder()
                .maximumSize(maxBlocks)
                .evictionListener(this::onEvicted)
                .build();
        this.owners = cache.asMap();
    }

    private void onEvicted(@Nullable BlockKey key, OwnerRecord @Nullable [] records, RemovalCause cause) {
        if (records != null) {
            for (OwnerRecord record : records) {
                record.drop();
                count(record.session(), -1);
            }
        }
        if (cause == RemovalCause.SIZE) {
            evictedKeys.increment();
        }
    }

    /**
     * InsertBlockHashes after the fence: for every hash (duplicates included) upsert this address's record, replacing
     * one left by an older session of the same address. Returns {@code hashes.size()}, as the reference does.
     */
    @Override
    public int insert(String namespace, List<ByteString> hashes, NodeSession session, long nowMs) {
        ArrayDeque<OwnerRecord> fifo = announced.computeIfAbsent(session, s -> new ArrayDeque<>());
        synchronized (fifo) {
            for (ByteString hash : hashes) {
                BlockKey key = new BlockKey(namespace, hash);
                OwnerRecord record = new OwnerRecord(session, nowMs, key);
                owners.compute(key, (k, current) -> withOwner(current, record));
                fifo.addLast(record);
                // per hash, so one large request never takes the index past its bound with this node's keys
                keepShare(session, fifo);
            }
        }
        return hashes.size();
    }

    /** Removes the session's oldest records while it owns more than its share; compacts the FIFO when mostly stale. */
    private void keepShare(NodeSession session, ArrayDeque<OwnerRecord> fifo) {
        while (session.ownedBlocks() > maxBlocksPerNode && !fifo.isEmpty()) {
            OwnerRecord oldest = fifo.pollFirst();
            if (oldest.dropped()) {
                continue; // removed or replaced since: nothing left to evict under this key
            }
            owners.computeIfPresent(oldest.key(), (k, current) -> {
                for (int i = 0; i < current.length; i++) {
                    if (current[i] == oldest) {
                        oldest.drop();
                        count(session, -1);
                        shareEvictedRecords.increment();
                        return without(current, i);
                    }
                }
                return current;
            });
        }
        // Removed and replaced records stay in the FIFO until compaction, holding their keys and hashes. Compacting
        // when stale entries match the live ones costs O(1) per insert amortised (one flag read per entry, no map
        // lookup); the small floor keeps a node that churns a small resident set (a fleet's common case) from keeping
        // ~130k dead entries, which at 1000 nodes was gigabytes of heap that no owner record accounted for.
        if (fifo.size() > 2 * Math.max(session.ownedBlocks(), FIFO_COMPACTION_FLOOR)) {
            fifo.removeIf(OwnerRecord::dropped);
        }
    }

    /** Entries in a session's announcement FIFO, live or not yet compacted away (tests of the heap bound). */
    int announcedEntries(NodeSession session) {
        ArrayDeque<OwnerRecord> fifo = announced.get(session);
        if (fifo == null) {
            return 0;
        }
        synchronized (fifo) {
            return fifo.size();
        }
    }

    private OwnerRecord[] withOwner(OwnerRecord[] current, OwnerRecord record) {
        if (current == null) {
            count(record.session(), 1);
            return new OwnerRecord[] {record};
        }
        String url = record.session().url();
        for (int i = 0; i < current.length; i++) {
            OwnerRecord existing = current[i];
            if (existing.session().url().equals(url)) {
                existing.drop();
                if (existing.session() != record.session()) {
                    count(existing.session(), -1);
                    count(record.session(), 1);
                }
                OwnerRecord[] next = current.clone();
                next[i] = record;
                return next;
            }
        }
        count(record.session(), 1);
        OwnerRecord[] next = Arrays.copyOf(current, current.length + 1);
        next[current.length] = record;
        return next;
    }

    /**
     * RemoveBlockHashes after the fence: removes this address's record only when it was written under {@code id};
     * other nodes' records and older sessions of this address stay. Returns the number of records removed.
     */
    @Override
    public int remove(String namespace, List<ByteString> hashes, String url, UUID id) {
        int[] removed = {0};
        for (ByteString hash : hashes) {
            owners.computeIfPresent(new BlockKey(namespace, hash), (key, current) -> {
                for (int i = 0; i < current.length; i++) {
                    NodeSession session = current[i].session();
                    if (session.url().equals(url) && session.id().equals(id)) {
                        removed[0]++;
                        current[i].drop();
                        count(session, -1);
                        return without(current, i);
                    }
                }
                return current;
            });
        }
        return removed[0];
    }

    /**
     * QueryPrefixBlocks: walks {@code hashes} in order until a hash has no visible owner, and returns each node's
     * contiguous prefix from hash 0, in order of first appearance. Read-only: it refreshes no liveness.
     */
    @Override
    public List<PrefixMatch> queryPrefix(String namespace, List<ByteString> hashes, long nowMs) {
        // Only nodes visible at hash 0 can have a non-zero prefix, so parallel arrays sized by the first hash's
        // owners (a handful) replace a hash map, and sessions compare by identity: one current session per address.
        NodeSession @Nullable [] nodes = null;
        int @Nullable [] counts = null;
        int nodeCount = 0;
        for (int i = 0; i < hashes.size(); i++) {
            OwnerRecord[] records = owners.get(new BlockKey(namespace, hashes.get(i)));
            if (records == null) {
                break;
            }
            if (nodes == null || counts == null) {
                nodes = new NodeSession[records.length];
                counts = new int[records.length];
            }
            boolean anyAdvanced = false;
            if (i == 0) {
                for (OwnerRecord record : records) {
                    if (record.session().isVisible(nowMs, staleAfterMs)) {
                        nodes[nodeCount] = record.session();
                        counts[nodeCount++] = 1;
                        anyAdvanced = true;
                    }
                }
            } else {
                // Visibility was decided at hash 0 for this query's instant; only those nodes can still advance.
                for (int r = 0; r < records.length; r++) {
                    NodeSession session = records[r].session();
                    // Owners are usually stored in the order they were at hash 0: try that slot first.
                    int j = r < nodeCount && nodes[r] == session ? r : indexOf(nodes, nodeCount, session);
                    if (j >= 0 && counts[j] == i) {
                        counts[j] = i + 1;
                        anyAdvanced = true;
                    }
                }
            }
            // No node advancing means every count is final; it also covers a hash without visible owners, which
            // ends the global prefix.
            if (!anyAdvanced) {
                break;
            }
        }
        if (nodes == null || counts == null) {
            return new ArrayList<>(); // no owner of the first hash
        }
        List<PrefixMatch> result = new ArrayList<>(nodeCount);
        for (int j = 0; j < nodeCount; j++) {
            result.add(new PrefixMatch(nodes[j].url(), counts[j]));
        }
        return result;
    }

    private static int indexOf(NodeSession[] nodes, int count, NodeSession session) {
        for (int j = 0; j < count; j++) {
            if (nodes[j] == session) {
                return j;
            }
        }
        return -1;
    }

    /**
     * UnregisterNode: removes every record of {@code url} written under {@code id}. Walks the announcement FIFOs of
     * that address's sessions with this id, which list every record they wrote, instead of the whole index: the cost
     * is the node's own announcements, not every node's. The session has ended by now (the registry unregisters it
     * first), so its FIFOs are dropped with their records.
     */
    @Override
    public long removeOwners(String url, UUID id) {
        long removed = 0;
        List<NodeSession> ended = new ArrayList<>(1);
        for (Map.Entry<NodeSession, ArrayDeque<OwnerRecord>> entry : announced.entrySet()) {
            NodeSession session = entry.getKey();
            if (!session.url().equals(url) || !session.id().equals(id)) {
                continue;
            }
            ArrayDeque<OwnerRecord> fifo = entry.getValue();
            synchronized (fifo) {
                for (OwnerRecord record : fifo) {
                    if (!record.dropped()) {
                        removed += removeRecord(record);
                    }
                }
                if (session.ended()) {
                    fifo.clear();
                    ended.add(session);
                }
            }
        }
        ended.forEach(announced::remove);
        return removed;
    }

    private int removeRecord(OwnerRecord record) {
        int[] removed = {0};
        owners.computeIfPresent(record.key(), (k, current) -> {
            for (int i = 0; i < current.length; i++) {
                if (current[i] == record) {
                    removed[0] = 1;
                    current[i].drop();
                    count(current[i].session(), -1);
                    return without(current, i);
                }
            }
            return current;
        });
        return removed[0];
    }

    /**
     * Drops records whose session ended (superseded, unregistered, swept), whose announcement is older than the TTL,
     * or whose node was silent for longer than the TTL; drops keys left without owners.
     */
    @Override
    public SweepStats sweep(long nowMs) {
        long[] removedOwners = {0};
        long[] removedKeys = {0};
        for (BlockKey key : owners.keySet()) {
            owners.computeIfPresent(key, (k, current) -> {
                OwnerRecord[] kept = null;
                int keptCount = 0;
                for (int i = 0; i < current.length; i++) {
                    OwnerRecord record = current[i];
                    NodeSession session = record.session();
                    boolean keep = !session.ended()
                            && nowMs - record.registeredAtMs() <= ttlMs
                            && nowMs - session.lastSeenMs() <= ttlMs;
                    if (keep) {
                        if (kept != null) {
                            kept[keptCount] = record;
                        }
                        keptCount++;
                    } else {
                        if (kept == null) {
                            kept = Arrays.copyOf(current, current.length);
                            keptCount = i;
                        }
                        removedOwners[0]++;
                        record.drop();
                        count(session, -1);
                    }
                }
                if (kept == null) {
                    return current;
                }
                if (keptCount == 0) {
                    removedKeys[0]++;
                    return null;
                }
                return Arrays.copyOf(kept, keptCount);
            });
        }
        announced.keySet().removeIf(NodeSession::ended);
        return new SweepStats(removedOwners[0], removedKeys[0], 0);
    }

    private void count(NodeSession session, long delta) {
        session.addOwnedBlocks(delta);
        ownerCount.add(delta);
    }

    private static OwnerRecord @Nullable [] without(OwnerRecord[] current, int index) {
        if (current.length == 1) {
            return null; // the key goes away with its last owner
        }
        OwnerRecord[] next = new OwnerRecord[current.length - 1];
        System.arraycopy(current, 0, next, 0, index);
        System.arraycopy(current, index + 1, next, index, current.length - index - 1);
        return next;
    }

    /** Keys in the index (approximate: may include keys expired but not yet cleaned up). */
    @Override
    public long keyCount() {
        return cache.estimatedSize();
    }

    /** Owner records across all keys. */
    @Override
    public long ownerCount() {
        return ownerCount.sum();
    }

    /** Keys dropped because the index reached {@code maxBlocks}. */
    @Override
    public long evictedKeys() {
        return evictedKeys.sum();
    }

    /** Owner records a node lost to its own newer announcements past {@code maxBlocksPerNode}. */
    @Override
    public long shareEvictedRecords() {
        return shareEvictedRecords.sum();
    }

    /** Runs Caffeine's pending maintenance (size eviction, expiry) now; tests use it to observe the bounds. */
    @Override
    public void cleanUp() {
        cache.cleanUp();
    }

    @Override
    public long ownedBlocks(NodeSession session) {
        return session.ownedBlocks();
    }

    @Override
    public long epoch() {
        return epoch;
    }

    @Override
    public String backend() {
        return "memory";
    }
}
