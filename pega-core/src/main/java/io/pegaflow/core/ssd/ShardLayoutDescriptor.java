package io.pegaflow.core.ssd;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;

/**
 * The layout of a shard file: a 4 KiB superblock, then the ring of entries.
 *
 * <pre>
 *   file:  [ superblock : 4096 ][ ring : capacity bytes, entries at (logical offset mod capacity) ]
 *   entry: [ header 512·k ][ payload 512·m ][ zero padding to a 4 KiB multiple ]   starts on a 4 KiB boundary
 *
 *   superblock (little endian):
 *   0        8          12           16                 24            32           36          40         44
 *   +--------+----------+------------+------------------+-------------+------------+-----------+----------+
 *   | "PEGA  | version  | superblock | ring capacity    | format id   | alignment  | shard     | crc32c   |
 *   |  SSD1" | u32 = 1  | bytes u32  | bytes u64        | u64 random  | u32 = 512  | index u32 | of 0..40 |
 *   +--------+----------+------------+------------------+-------------+------------+-----------+----------+
 * </pre>
 *
 * The format id is drawn when a shard is (re)formatted and repeated in every entry header, so entries left over from
 * an earlier format are never mistaken for current ones. A superblock that does not validate, or whose capacity
 * differs from the configured one, makes the store reformat the shard.
 */
final class ShardLayoutDescriptor {
    /** O_DIRECT granule: every file offset, length and memory address of an SSD transfer is a multiple of it. */
    static final int SSD_ALIGNMENT = 512;

    /**
     * Entries start and end on 4 KiB (the filesystem block): a direct write that covers only part of a filesystem
     * block makes ext4 and XFS serialise it and zero the rest of the block first, which costs a large share of the
     * throughput. The header is 512·k bytes and the payload a multiple of 512, so an entry is padded at its end.
     */
    static final int ENTRY_ALIGNMENT = 4096;

    static final int SUPERBLOCK_BYTES = 4096;
    static final int VERSION = 1;
    static final byte[] MAGIC = "PEGASSD1".getBytes(StandardCharsets.US_ASCII);

    static final int MAGIC_OFFSET = 0;
    static final int VERSION_OFFSET = 8;
    static final int SUPERBLOCK_BYTES_OFFSET = 12;
    static final int CAPACITY_OFFSET = 16;
    static final int FORMAT_ID_OFFSET = 24;
    static final int ALIGNMENT_OFFSET = 32;
    static final int SHARD_INDEX_OFFSET = 36;
    static final int CRC_OFFSET = 40;

    private ShardLayoutDescriptor() {}

    /** The superblock fields that matter. */
    record Superblock(long capacityBytes, long formatId, int shardIndex) {}

    /** Ring bytes for a shard of {@code bytes}: rounded down to whole entry blocks. */
    static long ringBytes(long bytes) {
        return bytes / ENTRY_ALIGNMENT * ENTRY_ALIGNMENT;
    }

    /** Ring bytes one entry occupies: header and payload, padded to {@link #ENTRY_ALIGNMENT}. */
    static long entryBytes(long headerBytes, long payloadBytes) {
        long raw = headerBytes + payloadBytes;
        return (raw + ENTRY_ALIGNMENT - 1) / ENTRY_ALIGNMENT * ENTRY_ALIGNMENT;
    }

    static long alignUp(long bytes) {
        return (bytes + SSD_ALIGNMENT - 1) / SSD_ALIGNMENT * SSD_ALIGNMENT;
    }

    static boolean isAligned(long value) {
        return (value & (SSD_ALIGNMENT - 1)) == 0;
    }

    /** Writes a superblock into the first {@link #SUPERBLOCK_BYTES} of {@code dst} (zeroing the rest). */
    static void encode(ByteBuffer dst, Superblock sb) {
        for (int i = 0; i < SUPERBLOCK_BYTES; i += 8) {
            dst.putLong(i, 0);
        }
        for (int i = 0; i < MAGIC.length; i++) {
            dst.put(MAGIC_OFFSET + i, MAGIC[i]);
        }
        dst.putInt(VERSION_OFFSET, VERSION);
        dst.putInt(SUPERBLOCK_BYTES_OFFSET, SUPERBLOCK_BYTES);
        dst.putLong(CAPACITY_OFFSET, sb.capacityBytes());
        dst.putLong(FORMAT_ID_OFFSET, sb.formatId());
        dst.putInt(ALIGNMENT_OFFSET, SSD_ALIGNMENT);
        dst.putInt(SHARD_INDEX_OFFSET, sb.shardIndex());
        dst.putInt(CRC_OFFSET, crc(dst));
    }

    /** The superblock in {@code src}, or null when it is absent, torn or of another version. */
    static @Nullable Superblock decode(ByteBuffer src) {
        for (int i = 0; i < MAGIC.length; i++) {
            if (src.get(MAGIC_OFFSET + i) != MAGIC[i]) {
                return null;
            }
        }
        if (src.getInt(VERSION_OFFSET) != VERSION
                || src.getInt(SUPERBLOCK_BYTES_OFFSET) != SUPERBLOCK_BYTES
                || src.getInt(ALIGNMENT_OFFSET) != SSD_ALIGNMENT
                || src.getInt(CRC_OFFSET) != crc(src)) {
            return null;
        }
        long capacity = src.getLong(CAPACITY_OFFSET);
        if (capacity <= 0 || capacity % ENTRY_ALIGNMENT != 0) {
            return null;
        }
        return new Superblock(capacity, src.getLong(FORMAT_ID_OFFSET), src.getInt(SHARD_INDEX_OFFSET));
    }

    private static int crc(ByteBuffer b) {
        CRC32C crc = new CRC32C();
        crc.update(b.duplicate().position(0).limit(CRC_OFFSET));
        return (int) crc.getValue();
    }
}
