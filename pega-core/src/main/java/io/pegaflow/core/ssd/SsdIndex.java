package io.pegaflow.core.ssd;

import io.pegaflow.core.block.BlockKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

/**
 * Every shard's ring plus one key-to-entry map, under one lock: a log-structured ring per shard, with overwrite
 * detection by logical offsets.
 *
 * <p>Two-phase: {@link #prepare} reserves ring space and maps the key to a not-yet-committed entry; the writer
 * {@link #commit}s it when its write finished. Only committed entries on healthy shards whose bytes the ring has not
 * reused ({@code begin >= tail}) are readable. Allocating past the end of a shard's ring skips to its start (an entry
 * never straddles the end) and advances the tail, which unmaps every entry it passes.
 *
 * <p>Thread-safe: every method takes the lock; critical sections are short and never do I/O.
 */
final class SsdIndex {
    private final SsdShard[] shards;
    private final HashMap<BlockKey, SsdEntry> map = new HashMap<>();
    private int cursor;

    SsdIndex(SsdShard[] shards) {
        this.shards = shards;
    }

    /**
     * Reserves ring space for each candidate not already present (in any state), round-robin over healthy shards.
     *
     * @return per candidate the new entry, or null when it was skipped (duplicate, no healthy shard, or larger than
     *     the shard it would go to, which does not advance the cursor, as in the reference)
     */
    synchronized SsdEntry[] prepare(
            List<BlockKey> keys, List<SlotLayout> layouts, int[] headerBytes, SsdMetrics metrics) {
        SsdEntry[] out = new SsdEntry[keys.size()];
        for (int i = 0; i < out.length; i++) {
            BlockKey key = keys.get(i);
            if (map.containsKey(key)) {
                continue;
            }
            int chosen = nextHealthy();
            if (chosen < 0) {
                break;
            }
            SsdShard shard = shards[chosen];
            long total = ShardLayoutDescriptor.entryBytes(
                    headerBytes[i], layouts.get(i).payloadBytes());
            long begin = allocate(shard, total);
            if (begin < 0) {
                metrics.error(SsdErrorKind.OVERSIZED);
                continue;
            }
            cursor = (chosen + 1) % shards.length;
            SsdEntry entry = new SsdEntry(key, layouts.get(i), shard, begin, headerBytes[i]);
            map.put(key, entry);
            shard.order.addLast(entry);
            shard.liveBytes += total;
            shard.liveEntries++;
            out[i] = entry;
        }
        return out;
    }

    private int nextHealthy() {
        for (int k = 0; k < shards.length; k++) {
            int i = (cursor + k) % shards.length;
            if (shards[i].healthy()) {
                return i;
            }
        }
        return -1;
    }

    /** The largest shard ring among healthy shards (a block larger than every ring is never written). */
    synchronized long largestHealthyCapacity() {
        long max = 0;
        for (SsdShard s : shards) {
            if (s.healthy()) {
                max = Math.max(max, s.capacityBytes());
            }
        }
        return max;
    }

    /** Reserves {@code size} bytes at the head of the shard's ring; -1 when it can never fit. */
    private long allocate(SsdShard shard, long size) {
        long capacity = shard.capacityBytes();
        if (size > capacity) {
            return -1;
        }
        long offset = Math.floorMod(shard.head, capacity);
        if (size > capacity - offset) {
            shard.head += capacity - offset; // skip the tail end of the file: entries never wrap
        }
        long begin = shard.head;
        shard.head += size;
        advanceTail(shard, Math.max(shard.tail, shard.head - capacity));
        return begin;
    }

    /** Moves the tail and drops the entries (and leading ghosts) it passed. */
    private void advanceTail(SsdShard shard, long newTail) {
        shard.tail = newTail;
        while (!shard.order.isEmpty()) {
            SsdEntry first = shard.order.peekFirst();
            boolean ghost = map.get(first.key) != first;
            if (!ghost && first.begin >= newTail) {
                break;
            }
            shard.order.pollFirst();
            unmap(first);
        }
    }

    private void unmap(SsdEntry entry) {
        if (map.remove(entry.key, entry)) {
            entry.shard.liveBytes -= entry.totalBytes();
            entry.shard.liveEntries--;
        }
    }

    private boolean readable(SsdEntry e) {
        return e.committed && e.begin >= e.shard.tail && e.shard.healthy() && map.get(e.key) == e;
    }

    /** Entries of the longest readable prefix of {@code keys}. */
    synchronized List<SsdEntry> readablePrefix(List<BlockKey> keys) {
        List<SsdEntry> out = new ArrayList<>();
        for (BlockKey key : keys) {
            SsdEntry e = map.get(key);
            if (e == null || !readable(e)) {
                break;
            }
            out.add(e);
        }
        return out;
    }

    /** Length of the longest readable prefix of {@code keys}. */
    synchronized int readablePrefixLength(List<BlockKey> keys) {
        int n = 0;
        for (BlockKey key : keys) {
            SsdEntry e = map.get(key);
            if (e == null || !readable(e)) {
                break;
            }
            n++;
        }
        return n;
    }

    /** Whether a prepared entry is still the mapped one and its bytes are not yet reused (worth writing). */
    synchronized boolean isLive(SsdEntry e) {
        return map.get(e.key) == e && e.begin >= e.shard.tail;
    }

    /**
     * Ends a write: success makes the entry readable; failure, or an entry the ring overwrote or replaced meanwhile,
     * unmaps it (it stays in the order as a ghost until the tail passes it).
     *
     * @return whether the entry is now committed
     */
    synchronized boolean commit(SsdEntry e, boolean ok) {
        if (map.get(e.key) != e) {
            return false;
        }
        if (!ok || e.begin < e.shard.tail) {
            unmap(e);
            return false;
        }
        e.committed = true;
        return true;
    }

    /** Removes an entry whose bytes proved bad (a checksum mismatch on read). */
    synchronized void drop(SsdEntry e) {
        unmap(e);
    }

    /** Unmaps every entry of a shard that went out of service, so its keys can be written to healthy shards. */
    synchronized int dropShard(SsdShard shard) {
        int n = 0;
        for (SsdEntry e : shard.order) {
            if (map.get(e.key) == e) {
                unmap(e);
                n++;
            }
        }
        return n;
    }

    /**
     * Installs what recovery found on one shard: entries in ascending {@code begin} order and the head they imply.
     * Entries the tail has passed are not mapped. Within a shard the newest copy of a key wins; across shards the
     * copy restored first does.
     *
     * @return the entries mapped
     */
    synchronized int restore(SsdShard shard, List<SsdEntry> entries, long head) {
        shard.head = head;
        shard.tail = Math.max(0, head - shard.capacityBytes());
        int mapped = 0;
        for (SsdEntry e : entries) {
            if (e.begin < shard.tail) {
                continue;
            }
            e.committed = true;
            shard.order.addLast(e);
            SsdEntry existing = map.get(e.key);
            if (existing != null) {
                if (existing.shard != shard) {
                    continue; // a copy on another shard already serves this key; this one stays a ghost
                }
                unmap(existing);
                mapped--;
            }
            map.put(e.key, e);
            shard.liveBytes += e.totalBytes();
            shard.liveEntries++;
            mapped++;
        }
        return mapped;
    }

    synchronized int size() {
        return map.size();
    }

    /** A consistent snapshot of one shard's counters: {live bytes, live entries, head, tail}. */
    synchronized long[] shardCounters(SsdShard shard) {
        return new long[] {shard.liveBytes, shard.liveEntries, shard.head, shard.tail};
    }
}
