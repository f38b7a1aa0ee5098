package io.pegaflow.core.ssd;

import io.pegaflow.core.block.BlockKey;

/**
 * One block's place in a shard's ring: {@code [begin, begin + totalBytes())} in logical offsets (header, payload,
 * padding to 4 KiB), which grow monotonically; the file position is {@code begin mod capacity} after the superblock.
 *
 * <p>Identity matters: the index maps a key to one entry object, and an entry that is no longer the mapped one is a
 * ghost (its write failed, it was overwritten, or a newer copy replaced it). {@link #committed} is guarded by the
 * index lock; {@link #payloadCrc} is written by the writing thread before it commits under that lock.
 */
final class SsdEntry {
    final BlockKey key;
    final SlotLayout layout;
    final SsdShard shard;
    final long begin;
    final int headerBytes;
    volatile int payloadCrc;
    boolean committed;

    SsdEntry(BlockKey key, SlotLayout layout, SsdShard shard, long begin, int headerBytes) {
        this.key = key;
        this.layout = layout;
        this.shard = shard;
        this.begin = begin;
        this.headerBytes = headerBytes;
    }

    long payloadBytes() {
        return layout.payloadBytes();
    }

    /** Ring bytes, padding included. */
    long totalBytes() {
        return ShardLayoutDescriptor.entryBytes(headerBytes, layout.payloadBytes());
    }

    /** File offset of the header. */
    long fileOffset() {
        return ShardLayoutDescriptor.SUPERBLOCK_BYTES + Math.floorMod(begin, shard.capacityBytes());
    }

    @Override
    public String toString() {
        return "SsdEntry[" + key + " shard=" + shard.id() + " begin=" + begin + " bytes=" + totalBytes() + "]";
    }
}
