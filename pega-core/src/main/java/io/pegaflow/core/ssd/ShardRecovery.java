package io.pegaflow.core.ssd;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;

/**
 * Opens a shard at start: formats it when it is new or unusable, otherwise rebuilds its entries by scanning the ring
 * (the reference truncates its file instead and starts empty).
 *
 * <p>The scan walks the ring from file position 0 in 4 KiB steps (entries start on 4 KiB boundaries). At each position it accepts an entry only if
 * the header validates (magic, version, header CRC, this format's id), its logical {@code begin} maps to exactly this
 * position, it fits before the end of the ring and, with {@code verifyOnStart}, its payload CRC matches; then it jumps
 * past the entry. Anything else is skipped 4 KiB at a time, which resynchronises after torn or stale regions.
 * The head is the end of the newest accepted entry; entries the implied tail has passed are dropped by
 * {@link SsdIndex#restore}. A {@code kill -9} mid-write therefore loses at most the entries whose writes had not
 * completed: their headers or payloads fail validation, and any older entry they partly overwrote fails its CRC.
 */
final class ShardRecovery {
    private static final int WINDOW_BYTES = 1 << 20;
    private static final int PEEK_READ_BYTES = 128 << 10;

    private ShardRecovery() {}

    /**
     * What opening one shard produced.
     *
     * @param entries accepted entries in ascending {@code begin} order
     * @param head the head they imply
     * @param dropped headers found but rejected (torn, corrupt, misplaced)
     * @param formatReason why the shard was (re)formatted, or null when it was recovered
     * @param scanFailure the I/O error that stopped the scan (the shard is then out of service), or null
     */
    record Opened(
            SsdShard shard,
            List<SsdEntry> entries,
            long head,
            int dropped,
            @Nullable String formatReason,
            @Nullable SsdIoException scanFailure) {}

    static Opened open(int id, Path path, long capacityBytes, ShardFile.Opener opener, boolean verify) {
        ShardFile file = opener.open(path);
        try (IoScratch scratch = new IoScratch(WINDOW_BYTES, 1)) {
            long expectedSize = ShardLayoutDescriptor.SUPERBLOCK_BYTES + capacityBytes;
            ShardLayoutDescriptor.@Nullable Superblock sb = null;
            @Nullable String reason = null;
            long size = file.sizeBytes();
            if (size < ShardLayoutDescriptor.SUPERBLOCK_BYTES) {
                reason = size == 0 ? "new file" : "file shorter than a superblock";
            } else {
                long n = file.read(scratch.headerAddress(), ShardLayoutDescriptor.SUPERBLOCK_BYTES, 0);
                sb = n == ShardLayoutDescriptor.SUPERBLOCK_BYTES
                        ? ShardLayoutDescriptor.decode(scratch.headerView(ShardLayoutDescriptor.SUPERBLOCK_BYTES))
                        : null;
                if (sb == null) {
                    reason = "no valid superblock";
                } else if (sb.capacityBytes() != capacityBytes) {
                    reason = "capacity changed from " + sb.capacityBytes() + " to " + capacityBytes + " bytes";
                } else if (size != expectedSize) {
                    reason = "file is " + size + " bytes, expected " + expectedSize;
                }
            }
            if (reason != null || sb == null) { // sb is null only with a reason
                long formatId = format(file, scratch, id, capacityBytes, expectedSize);
                return new Opened(new SsdShard(id, file, capacityBytes, formatId), List.of(), 0, 0, reason, null);
            }
            SsdShard shard = new SsdShard(id, file, capacityBytes, sb.formatId());
            return scan(shard, scratch, verify);
        } catch (RuntimeException e) {
            file.close();
            throw e;
        }
    }

    private static long format(ShardFile file, IoScratch scratch, int id, long capacityBytes, long size) {
        long formatId;
        do {
            formatId = ThreadLocalRandom.current().nextLong();
        } while (formatId == 0);
        file.resize(size);
        ShardLayoutDescriptor.encode(
                scratch.headerView(ShardLayoutDescriptor.SUPERBLOCK_BYTES),
                new ShardLayoutDescriptor.Superblock(capacityBytes, formatId, id));
        long iov = scratch.iovAddress(1);
        NativeIo.putIovec(iov, 0, scratch.headerAddress(), ShardLayoutDescriptor.SUPERBLOCK_BYTES);
        long n = file.writev(iov, 1, 0);
        if (n != ShardLayoutDescriptor.SUPERBLOCK_BYTES) {
            throw new SsdIoException(SsdErrorKind.SHORT_WRITE, 0, "superblock of " + file.path() + ": wrote " + n);
        }
        file.sync();
        return formatId;
    }

    private static Opened scan(SsdShard shard, IoScratch scratch, boolean verify) {
        Window w = new Window(shard, scratch, verify ? WINDOW_BYTES : PEEK_READ_BYTES);
        long capacity = shard.capacityBytes();
        List<SsdEntry> found = new ArrayList<>();
        long head = 0;
        int dropped = 0;
        long pos = 0;
        try {
            while (pos + ShardLayoutDescriptor.ENTRY_ALIGNMENT <= capacity) {
                int headerBytes = EntryDescriptor.peekHeaderBytes(w.at(pos, ShardLayoutDescriptor.SSD_ALIGNMENT));
                if (headerBytes < 0) {
                    pos += ShardLayoutDescriptor.ENTRY_ALIGNMENT;
                    continue;
                }
                EntryDescriptor.Header h = pos + headerBytes <= capacity
                        ? EntryDescriptor.decode(w.at(pos, headerBytes), headerBytes, shard.formatId())
                        : null;
                boolean placed = h != null
                        && h.begin() >= 0
                        && Math.floorMod(h.begin(), capacity) == pos
                        && pos + h.totalBytes() <= capacity;
                if (h == null
                        || !placed
                        || (verify && !payloadMatches(w, pos + headerBytes, h.payloadBytes(), h.payloadCrc()))) {
                    dropped++;
                    pos += ShardLayoutDescriptor.ENTRY_ALIGNMENT;
                    continue;
                }
                SsdEntry entry = new SsdEntry(h.key(), h.layout(), shard, h.begin(), headerBytes);
                entry.payloadCrc = h.payloadCrc();
                found.add(entry);
                head = Math.max(head, h.begin() + h.totalBytes());
                pos += h.totalBytes();
            }
        } catch (SsdIoException e) {
            return new Opened(shard, List.of(), 0, dropped, null, e);
        }
        found.sort((a, b) -> Long.compare(a.begin, b.begin));
        return new Opened(shard, found, head, dropped, null, null);
    }

    private static boolean payloadMatches(Window w, long start, long length, int expected) {
        CRC32C crc = new CRC32C();
        long at = start;
        long remaining = length;
        while (remaining > 0) {
            long chunk = Math.min(remaining, WINDOW_BYTES);
            crc.update(w.at(at, chunk));
            at += chunk;
            remaining -= chunk;
        }
        return (int) crc.getValue() == expected;
    }

    /** A read-through window over the ring, refilled with one aligned direct read when a range is not inside it. */
    private static final class Window {
        private final SsdShard shard;
        private final IoScratch buffer;
        private final long readBytes;
        private long start = -1;
        private long length;

        Window(SsdShard shard, IoScratch buffer, long readBytes) {
            this.shard = shard;
            this.buffer = buffer;
            this.readBytes = readBytes;
        }

        /** A view of ring bytes {@code [pos, pos + len)}; {@code len <= WINDOW_BYTES}, both multiples of 512. */
        ByteBuffer at(long pos, long len) {
            if (start < 0 || pos < start || pos + len > start + length) {
                long want = Math.min(Math.max(len, readBytes), shard.capacityBytes() - pos);
                long n = shard.file().read(buffer.headerAddress(), want, ShardLayoutDescriptor.SUPERBLOCK_BYTES + pos);
                if (n != want) {
                    start = -1;
                    throw new SsdIoException(
                            SsdErrorKind.SHORT_READ, 0, shard.path() + ": read " + n + " of " + want + " at " + pos);
                }
                start = pos;
                length = want;
            }
            return NativeIo.view(buffer.headerAddress() + (pos - start), len);
        }
    }
}
