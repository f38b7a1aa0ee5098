package io.pegaflow.core.ssd;

import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * One shard: its file, its ring state and its health.
 *
 * <p>Ring state ({@code head}, {@code tail}, {@code order}, live counts) is guarded by the {@link SsdIndex} lock.
 * {@code head} and {@code tail} are logical offsets that only grow; {@code head - tail <= capacity}, and an entry is
 * valid while {@code begin >= tail}, which guarantees none of its bytes has been reused.
 *
 * <p>Health is one-way: the first I/O failure takes the shard out of service for the life of the process (reads
 * become misses, writes go to other shards) and records why; the operator sees it on the health endpoint.
 */
final class SsdShard {
    private final int id;
    private final ShardFile file;
    private final long capacityBytes;
    private final long formatId;

    long head;
    long tail;
    final ArrayDeque<SsdEntry> order = new ArrayDeque<>();
    long liveBytes;
    int liveEntries;

    final LongAdder bytesWritten = new LongAdder();
    final LongAdder bytesRead = new LongAdder();

    private volatile boolean healthy = true;
    private volatile @Nullable SsdErrorKind failureKind; // null while healthy
    private volatile @Nullable String failureDetail;
    private volatile long lastFileCheckNanos;
    private volatile boolean fileChecked;

    SsdShard(int id, ShardFile file, long capacityBytes, long formatId) {
        this.id = id;
        this.file = file;
        this.capacityBytes = capacityBytes;
        this.formatId = formatId;
    }

    int id() {
        return id;
    }

    ShardFile file() {
        return file;
    }

    Path path() {
        return file.path();
    }

    long capacityBytes() {
        return capacityBytes;
    }

    long formatId() {
        return formatId;
    }

    boolean healthy() {
        return healthy;
    }

    @Nullable
    SsdErrorKind failureKind() {
        return failureKind;
    }

    @Nullable
    String failureDetail() {
        return failureDetail;
    }

    /** Takes the shard out of service; true only for the call that did it (that caller logs it). */
    synchronized boolean markUnhealthy(SsdErrorKind kind, String detail) {
        if (!healthy) {
            return false;
        }
        failureKind = kind;
        failureDetail = detail;
        healthy = false;
        return true;
    }

    /** Whether a file check is due; rate-limits the {@code stat} behind {@link ShardFile#isReplaced()}. */
    boolean fileCheckDue(long nowNanos, long intervalNanos) {
        if (fileChecked && nowNanos - lastFileCheckNanos < intervalNanos) {
            return false;
        }
        fileChecked = true;
        lastFileCheckNanos = nowNanos;
        return true;
    }
}
