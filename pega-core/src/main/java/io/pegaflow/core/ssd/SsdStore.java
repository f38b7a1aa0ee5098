package io.pegaflow.core.ssd;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.metrics.DurationRecorder;
import io.pegaflow.core.tier.SealedBlockSpill;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.NanoClock;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SSD tier's store: sharded, log-structured rings of checksummed entries written and read with {@code O_DIRECT}
 * straight from and into pinned pool memory (see {@code docs/ssd.md}).
 *
 * <ul>
 *   <li><b>Shards</b>: one file per entry of {@link SsdConfig#paths()}, each a 4 KiB superblock plus a ring
 *       ({@link ShardLayoutDescriptor}); blocks go round-robin over healthy shards.
 *   <li><b>Entries</b>: a header naming key, layout, length and CRC32C, then the payload ({@link EntryDescriptor}).
 *   <li><b>Restart</b>: {@link #open} rebuilds the index by scanning every shard ({@link ShardRecovery}); torn and
 *       corrupt entries are dropped, the rest are served.
 *   <li><b>Writes</b>: {@link #offer} queues without blocking and without holding references ({@link SsdWriter}).
 *   <li><b>Reads</b>: {@link #readPrefix} fetches the longest readable prefix of keys ({@link SsdReader}).
 *   <li><b>Faults</b>: an I/O error, a short transfer, or a removed file takes that shard out of service: it is
 *       counted, logged once, its entries leave the index (reads miss, keys may be rewritten elsewhere), and
 *       {@link #shardStatus()} reports the reason. Nothing is thrown to callers and no corrupt block is ever returned.
 * </ul>
 *
 * <p>Thread-safe. Lifecycle: {@link #open}, use, {@link #close()} (idempotent) before the pool it reads into closes.
 */
public final class SsdStore implements SealedBlockSpill, AutoCloseable {
    static final Logger LOG = LoggerFactory.getLogger(SsdStore.class);
    private static final long FILE_CHECK_INTERVAL_NANOS = 100_000_000L;

    private final SsdConfig config;
    private final NanoClock clock;
    private final SsdShard[] shards;
    private final SsdIndex index;
    private final SsdMetrics metrics = new SsdMetrics();
    private final SsdWriter writer;
    private final SsdReader reader;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Set<SsdErrorKind> loggedSkips = EnumSet.noneOf(SsdErrorKind.class);
    private final AtomicBoolean loggedChecksum = new AtomicBoolean();

    private SsdStore(SsdConfig config, List<ShardRecovery.Opened> opened, NanoClock clock) {
        this.config = config;
        this.clock = clock;
        this.shards = new SsdShard[opened.size()];
        for (int i = 0; i < shards.length; i++) {
            shards[i] = opened.get(i).shard();
        }
        this.index = new SsdIndex(shards);
        for (ShardRecovery.Opened o : opened) {
            SsdShard shard = o.shard();
            if (o.scanFailure() != null) {
                onIoError(shard, o.scanFailure());
                continue;
            }
            int mapped = index.restore(shard, o.entries(), o.head());
            int expired = o.entries().size() - mapped;
            metrics.add(SsdCounter.RECOVERED_ENTRIES, mapped);
            metrics.add(SsdCounter.RECOVERY_DROPPED_ENTRIES, o.dropped() + expired);
            if (o.formatReason() != null) {
                LOG.info(
                        "SSD shard {} at {}: formatted ({}), ring {} bytes",
                        shard.id(),
                        shard.path(),
                        o.formatReason(),
                        shard.capacityBytes());
            } else {
                LOG.info(
                        "SSD shard {} at {}: recovered {} entries, dropped {} torn or corrupt and {} overwritten,"
                                + " ring {} bytes",
                        shard.id(),
                        shard.path(),
                        mapped,
                        o.dropped(),
                        expired,
                        shard.capacityBytes());
            }
        }
        this.writer = new SsdWriter(this, index, metrics, config.writeQueueDepth(), config.writeInflight());
        this.reader =
                new SsdReader(this, index, metrics, clock, config.prefetchQueueDepth(), config.prefetchInflight());
    }

    /** {@link #open(SsdConfig, NanoClock, AgentGroup)} on the system clock, reporting to a private agent group. */
    public static SsdStore open(SsdConfig config) {
        return open(config, NanoClock.SYSTEM, new AgentGroup());
    }

    /**
     * Opens every shard file for direct I/O, formatting new or unusable ones and recovering the rest, then starts the
     * writer and reader agents (registered with {@code agents}).
     *
     * @param clock what file checks and prefetch durations read
     * @throws IllegalStateException when a shard file cannot be created or opened (a configuration error)
     */
    public static SsdStore open(SsdConfig config, NanoClock clock, AgentGroup agents) {
        return open(config, DirectIoFile::open, clock, agents);
    }

    static SsdStore open(SsdConfig config, ShardFile.Opener opener) {
        return open(config, opener, NanoClock.SYSTEM, new AgentGroup());
    }

    static SsdStore open(SsdConfig config, ShardFile.Opener opener, NanoClock clock, AgentGroup agents) {
        List<ShardRecovery.Opened> opened = new ArrayList<>();
        try {
            for (int i = 0; i < config.paths().size(); i++) {
                opened.add(ShardRecovery.open(
                        i, config.paths().get(i), config.shardCapacityBytes(), opener, config.verifyOnStart()));
            }
        } catch (RuntimeException e) {
            opened.forEach(o -> o.shard().file().close());
            throw e;
        }
        SsdStore store = new SsdStore(config, opened, clock);
        try {
            store.writer.start(agents);
            store.reader.start(agents);
        } catch (RuntimeException | Error e) {
            store.close();
            throw e;
        }
        return store;
    }

    /**
     * Queues blocks for writing; never blocks. Holds no reference: a block freed before the writer reaches it is
     * skipped. Keys already on disk (or being written) are skipped. A full queue drops the batch (counted). As the
     * engine's {@link SealedBlockSpill}, it is offered every block that entered the RAM index.
     */
    @Override
    public void offer(List<BlockKey> keys, List<SealedBlock> blocks) {
        writer.offer(keys, blocks);
    }

    /** Completes when everything offered before has been written (or has failed). */
    public CompletableFuture<Void> flush() {
        return writer.flush();
    }

    /** The number of leading keys that can be read now. */
    public int readablePrefix(List<BlockKey> keys) {
        return index.readablePrefixLength(keys);
    }

    /**
     * Reads the longest readable prefix of {@code keys} into pool memory from {@code allocator} (which may evict RAM
     * blocks). Never blocks and never completes exceptionally.
     *
     * @return the blocks in key order up to the first that could not be read (or a full queue: empty); each carries
     *     one reference that passes to the caller
     */
    public CompletableFuture<List<SealedBlock>> readPrefix(
            List<BlockKey> keys, LongFunction<PinnedAllocation> allocator) {
        List<SsdEntry> entries = index.readablePrefix(keys);
        if (entries.isEmpty() || closed.get()) {
            return CompletableFuture.completedFuture(List.of());
        }
        return reader.submit(entries, allocator);
    }

    /** Entries the index serves. */
    public int entryCount() {
        return index.size();
    }

    /** The tier's counters and levels, read-only (the meter binder and the admin API read the same view). */
    public SsdMetricsView metrics() {
        return metrics;
    }

    /** The writable counters, for this package's writers and the backing tier's prefetch budget. */
    SsdMetrics metricsCells() {
        return metrics;
    }

    /** Installs the recorder of the prefetch duration (the server binds its histogram before traffic starts). */
    public void bindPrefetchDuration(DurationRecorder recorder) {
        metrics.bindPrefetchDuration(recorder);
    }

    public SsdConfig config() {
        return config;
    }

    /** Whether every shard is in service. */
    public boolean healthy() {
        for (SsdShard s : shards) {
            if (!s.healthy()) {
                return false;
            }
        }
        return true;
    }

    /** A snapshot per shard, in shard order (cheap: no system call). */
    public List<ShardStatus> shardStatus() {
        List<ShardStatus> out = new ArrayList<>(shards.length);
        for (SsdShard s : shards) {
            long[] c = index.shardCounters(s);
            out.add(new ShardStatus(
                    s.id(),
                    s.path().toString(),
                    s.healthy(),
                    s.failureKind(),
                    s.failureDetail(),
                    c[0],
                    s.capacityBytes(),
                    c[1],
                    s.bytesWritten.sum(),
                    s.bytesRead.sum()));
        }
        return out;
    }

    /**
     * Takes every shard whose file was removed or replaced out of service now (one {@code stat} per shard). The
     * I/O agents run the same check, rate limited, before each batch; the health endpoint calls this.
     */
    public void checkShardFiles() {
        checkFiles(true);
    }

    /** The agents' rate-limited check. Never throws. */
    void checkFiles() {
        checkFiles(false);
    }

    private void checkFiles(boolean force) {
        long now = clock.nanoTime();
        for (SsdShard s : shards) {
            if (!s.healthy() || (!s.fileCheckDue(now, FILE_CHECK_INTERVAL_NANOS) && !force)) {
                continue;
            }
            try {
                if (s.file().isReplaced()) {
                    onIoError(
                            s,
                            new SsdIoException(
                                    SsdErrorKind.FILE_REMOVED, 2, s.path() + " was removed or replaced while open"));
                }
            } catch (RuntimeException e) {
                LOG.warn("SSD shard {}: file check failed: {}", s.id(), e.toString());
            }
        }
    }

    /** Counts an I/O failure; the first one on a shard takes it out of service and is logged. */
    void onIoError(SsdShard shard, SsdIoException e) {
        metrics.error(e.kind());
        if (e.kind().disablesShard() && shard.markUnhealthy(e.kind(), String.valueOf(e.getMessage()))) {
            int dropped = index.dropShard(shard);
            LOG.error(
                    "SSD shard {} at {} is out of service ({}: {}); {} entries dropped, its reads now miss and writes go"
                            + " to other shards",
                    shard.id(),
                    shard.path(),
                    e.kind().label(),
                    e.getMessage(),
                    dropped);
        }
    }

    /** A read whose payload did not match its checksum: that entry goes, the shard stays. */
    void onChecksumMismatch(SsdEntry entry) {
        metrics.error(SsdErrorKind.CHECKSUM);
        index.drop(entry);
        if (loggedChecksum.compareAndSet(false, true)) {
            LOG.warn("SSD entry {} failed its checksum and was dropped (further mismatches are only counted)", entry);
        }
    }

    /** A block that cannot be stored at all. */
    void onSkipped(SsdErrorKind kind, BlockKey key) {
        metrics.error(kind);
        boolean first;
        synchronized (loggedSkips) {
            first = loggedSkips.add(kind);
        }
        if (first) {
            LOG.warn(
                    "SSD write of {} skipped ({}): {} (further cases are only counted)",
                    key,
                    kind.label(),
                    kind == SsdErrorKind.UNALIGNED
                            ? "segments are not 512-byte aligned; the host alignment must be 512 with the SSD tier"
                            : "the block or its layout does not fit an entry");
        }
    }

    /** Stops the agents (waiting for I/O in progress), then closes every shard file. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        writer.close();
        reader.close();
        for (SsdShard s : shards) {
            s.file().close();
        }
    }
}
