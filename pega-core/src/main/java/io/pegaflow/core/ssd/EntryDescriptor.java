package io.pegaflow.core.ssd;

import io.pegaflow.core.block.BlockKey;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;

/**
 * The header in front of every entry in a shard's ring. It makes the file self-describing, so that a restart rebuilds
 * the index by scanning (the reference keeps its index only in memory and truncates the file at start).
 *
 * <pre>
 *   entry:  [ header : 512·k bytes ][ payload : the slots' segments, back to back (see SlotLayout) ][ 0 to 4 KiB ]
 *
 *   header (little endian):
 *   0          4        6          8             16            24              32
 *   +----------+--------+----------+-------------+-------------+---------------+
 *   | "PGE1"   | ver=1  | header   | format id   | begin       | payload bytes |
 *   | u32      | u16    | /512 u16 | u64         | u64 logical | u64           |
 *   +----------+--------+----------+-------------+-------------+---------------+
 *   32             36           40        42        44        46      48           52      56
 *   +--------------+------------+---------+---------+---------+-------+------------+-------+
 *   | payload      | slot count | ns len  | hash len| runs    | 0     | header     | 0     |
 *   | crc32c u32   | u32        | u16     | u16     | u16     | u16   | crc32c u32 | u32   |
 *   +--------------+------------+---------+---------+---------+-------+------------+-------+
 *   56: runs x { slots u32, segments u32, segment bytes u64 }, namespace (UTF-8), hash, zeros to 512·k
 * </pre>
 *
 * The header CRC covers the whole header with its own field read as zero; the payload CRC covers the payload. A
 * header is accepted only when its magic, version, CRC and format id match and its {@code begin} maps to the position
 * it was found at; a payload only when its CRC matches (checked at start and again on every read).
 */
final class EntryDescriptor {
    static final int MAGIC = 0x31454750; // "PGE1"
    static final int VERSION = 1;

    static final int MAGIC_OFFSET = 0;
    static final int VERSION_OFFSET = 4;
    static final int HEADER_SECTORS_OFFSET = 6;
    static final int FORMAT_ID_OFFSET = 8;
    static final int BEGIN_OFFSET = 16;
    static final int PAYLOAD_BYTES_OFFSET = 24;
    static final int PAYLOAD_CRC_OFFSET = 32;
    static final int SLOT_COUNT_OFFSET = 36;
    static final int NAMESPACE_LENGTH_OFFSET = 40;
    static final int HASH_LENGTH_OFFSET = 42;
    static final int RUN_COUNT_OFFSET = 44;
    static final int HEADER_CRC_OFFSET = 48;
    static final int RUNS_OFFSET = 56;
    static final int RUN_BYTES = 16;

    /** Largest header accepted: bounds the scratch buffers and what a scan trusts. */
    static final int MAX_HEADER_BYTES = 64 * 1024;

    private EntryDescriptor() {}

    /** A decoded header. */
    record Header(BlockKey key, SlotLayout layout, long begin, long payloadBytes, int payloadCrc, int headerBytes) {
        /** Ring bytes, padding included. */
        long totalBytes() {
            return ShardLayoutDescriptor.entryBytes(headerBytes, payloadBytes);
        }
    }

    /** Header bytes needed for this key and layout (a multiple of 512); may exceed {@link #MAX_HEADER_BYTES}. */
    static int headerBytes(BlockKey key, SlotLayout layout) {
        long raw = RUNS_OFFSET
                + (long) layout.runCount() * RUN_BYTES
                + key.namespace().getBytes(StandardCharsets.UTF_8).length
                + key.hash().length;
        return (int) Math.min(Integer.MAX_VALUE, ShardLayoutDescriptor.alignUp(raw));
    }

    /** Whether this key and layout fit in a header at all (u16 fields, size bound). */
    static boolean fits(BlockKey key, SlotLayout layout) {
        int ns = key.namespace().getBytes(StandardCharsets.UTF_8).length;
        return ns <= 0xFFFF
                && key.hash().length <= 0xFFFF
                && layout.runCount() <= 0xFFFF
                && headerBytes(key, layout) <= MAX_HEADER_BYTES;
    }

    /** Encodes a header into {@code dst[0, headerBytes)}; {@code dst} is little endian. */
    static void encode(
            ByteBuffer dst,
            int headerBytes,
            long formatId,
            long begin,
            BlockKey key,
            SlotLayout layout,
            int payloadCrc) {
        byte[] ns = key.namespace().getBytes(StandardCharsets.UTF_8);
        byte[] hash = key.hash();
        dst.putInt(MAGIC_OFFSET, MAGIC);
        dst.putShort(VERSION_OFFSET, (short) VERSION);
        dst.putShort(HEADER_SECTORS_OFFSET, (short) (headerBytes / ShardLayoutDescriptor.SSD_ALIGNMENT));
        dst.putLong(FORMAT_ID_OFFSET, formatId);
        dst.putLong(BEGIN_OFFSET, begin);
        dst.putLong(PAYLOAD_BYTES_OFFSET, layout.payloadBytes());
        dst.putInt(PAYLOAD_CRC_OFFSET, payloadCrc);
        dst.putInt(SLOT_COUNT_OFFSET, layout.slotCount());
        dst.putShort(NAMESPACE_LENGTH_OFFSET, (short) ns.length);
        dst.putShort(HASH_LENGTH_OFFSET, (short) hash.length);
        dst.putShort(RUN_COUNT_OFFSET, (short) layout.runCount());
        dst.putShort(RUN_COUNT_OFFSET + 2, (short) 0);
        dst.putInt(HEADER_CRC_OFFSET, 0);
        dst.putInt(HEADER_CRC_OFFSET + 4, 0);
        int at = RUNS_OFFSET;
        for (int r = 0; r < layout.runCount(); r++) {
            dst.putInt(at, layout.runSlots(r));
            dst.putInt(at + 4, layout.runSegments(r));
            dst.putLong(at + 8, layout.runSegmentBytes(r));
            at += RUN_BYTES;
        }
        for (byte b : ns) {
            dst.put(at++, b);
        }
        for (byte b : hash) {
            dst.put(at++, b);
        }
        while (at < headerBytes) {
            dst.put(at++, (byte) 0);
        }
        dst.putInt(HEADER_CRC_OFFSET, headerCrc(dst, headerBytes));
    }

    /**
     * The header length announced by the first bytes of {@code src} (at least 8 readable), or -1 when they are not
     * the start of a header.
     */
    static int peekHeaderBytes(ByteBuffer src) {
        if (src.getInt(MAGIC_OFFSET) != MAGIC || src.getShort(VERSION_OFFSET) != VERSION) {
            return -1;
        }
        int bytes = (src.getShort(HEADER_SECTORS_OFFSET) & 0xFFFF) * ShardLayoutDescriptor.SSD_ALIGNMENT;
        return bytes < ShardLayoutDescriptor.SSD_ALIGNMENT || bytes > MAX_HEADER_BYTES ? -1 : bytes;
    }

    /**
     * Decodes the header in {@code src[0, headerBytes)} (little endian), or returns null when it is torn, foreign or
     * inconsistent.
     */
    static @Nullable Header decode(ByteBuffer src, int headerBytes, long expectedFormatId) {
        if (peekHeaderBytes(src) != headerBytes
                || src.getInt(HEADER_CRC_OFFSET) != headerCrc(src, headerBytes)
                || src.getLong(FORMAT_ID_OFFSET) != expectedFormatId) {
            return null;
        }
        int runs = src.getShort(RUN_COUNT_OFFSET) & 0xFFFF;
        int nsLength = src.getShort(NAMESPACE_LENGTH_OFFSET) & 0xFFFF;
        int hashLength = src.getShort(HASH_LENGTH_OFFSET) & 0xFFFF;
        long end = RUNS_OFFSET + (long) runs * RUN_BYTES + nsLength + hashLength;
        if (end > headerBytes || runs == 0) {
            return null;
        }
        int[] slots = new int[runs];
        byte[] segs = new byte[runs];
        long[] lens = new long[runs];
        int at = RUNS_OFFSET;
        for (int r = 0; r < runs; r++) {
            slots[r] = src.getInt(at);
            int segments = src.getInt(at + 4);
            if (segments != 1 && segments != 2) {
                return null;
            }
            segs[r] = (byte) segments;
            lens[r] = src.getLong(at + 8);
            at += RUN_BYTES;
        }
        SlotLayout layout = new SlotLayout(slots, segs, lens);
        long payload = src.getLong(PAYLOAD_BYTES_OFFSET);
        if (!layout.isValid()
                || layout.payloadBytes() != payload
                || layout.slotCount() != src.getInt(SLOT_COUNT_OFFSET)) {
            return null;
        }
        byte[] ns = new byte[nsLength];
        for (int i = 0; i < nsLength; i++) {
            ns[i] = src.get(at++);
        }
        byte[] hash = new byte[hashLength];
        for (int i = 0; i < hashLength; i++) {
            hash[i] = src.get(at++);
        }
        BlockKey key = new BlockKey(new String(ns, StandardCharsets.UTF_8), hash);
        return new Header(key, layout, src.getLong(BEGIN_OFFSET), payload, src.getInt(PAYLOAD_CRC_OFFSET), headerBytes);
    }

    private static int headerCrc(ByteBuffer b, int headerBytes) {
        CRC32C crc = new CRC32C();
        ByteBuffer d = b.duplicate();
        crc.update(d.limit(HEADER_CRC_OFFSET).position(0));
        crc.update(new byte[4]);
        crc.update(d.limit(headerBytes).position(HEADER_CRC_OFFSET + 4));
        return (int) crc.getValue();
    }
}
