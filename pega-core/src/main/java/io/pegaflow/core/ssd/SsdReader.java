package io.pegaflow.core.ssd;

import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.kernel.agent.Agent;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.AgentRunner;
import io.pegaflow.kernel.agent.CommandQueue;
import io.pegaflow.kernel.agent.NanoClock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongFunction;
import org.jspecify.annotations.Nullable;

/**
 * The read path ({@code docs/ssd.md}): a bounded queue of prefetch batches, one dispatcher agent that allocates pool
 * memory for each block (which may evict RAM blocks), and {@code prefetchInflight} I/O worker agents
 * ({@link IoWorkers}), each reading one block's payload with one {@code pread} straight into its allocation.
 *
 * <p>A read is accepted only if it returned every byte, its CRC32C matches the one recorded at write time, and the
 * ring has not reused the entry meanwhile. The batch's result is the blocks in request order up to the first one that
 * failed; blocks after that gap are released (the query path only takes a contiguous prefix).
 *
 * <p>Unlike the reference, each block gets its own allocation (not one per batch), so a prefetched block's memory
 * returns to the pool when that block goes, not when its whole batch does.
 */
final class SsdReader implements Agent {
    private static final long STOP_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);
    private static final long MAX_IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final SsdStore store;
    private final SsdIndex index;
    private final SsdMetrics metrics;
    private final NanoClock clock;
    private final CommandQueue<Prefetch> queue;
    private final IoWorkers<Read> io;
    private final AgentRunner dispatcher;
    private volatile boolean closed;
    private volatile @Nullable AgentGroup agents; // set by start()

    /** A queued batch. */
    private record Prefetch(Batch batch) {}

    /** One block read into its allocation; the allocation's reference is the operation's until it is done. */
    private record Read(Batch batch, int slot, SsdEntry entry, PinnedAllocation allocation) {}

    private static final class Batch {
        final List<SsdEntry> entries;
        final LongFunction<PinnedAllocation> allocator;
        final CompletableFuture<List<SealedBlock>> done = new CompletableFuture<>();
        final long startedNanos;
        final @Nullable SealedBlock[] results; // null until read, or for a block that failed
        final AtomicInteger remaining;

        Batch(List<SsdEntry> entries, LongFunction<PinnedAllocation> allocator, long startedNanos) {
            this.entries = entries;
            this.allocator = allocator;
            this.startedNanos = startedNanos;
            this.results = new SealedBlock[entries.size()];
            this.remaining = new AtomicInteger(entries.size());
        }
    }

    SsdReader(SsdStore store, SsdIndex index, SsdMetrics metrics, NanoClock clock, int queueDepth, int inflight) {
        this.store = store;
        this.index = index;
        this.metrics = metrics;
        this.clock = clock;
        this.queue = new CommandQueue<>(Prefetch.class, queueDepth);
        this.io = new IoWorkers<>(
                "pega-ssd-read",
                Read.class,
                inflight,
                r -> readOne(r.batch(), r.slot(), r.entry(), r.allocation()),
                r -> abandon(r.batch(), r.slot(), r.allocation()));
        this.dispatcher = new AgentRunner(this, queue.idleStrategy(MAX_IDLE_NANOS));
    }

    void start(AgentGroup group) {
        this.agents = group;
        io.start(group);
        group.add(dispatcher.start());
    }

    @Override
    public String roleName() {
        return "pega-ssd-prefetch";
    }

    /** Queues a read of {@code entries} without blocking; a full queue answers an empty result at once (counted). */
    CompletableFuture<List<SealedBlock>> submit(List<SsdEntry> entries, LongFunction<PinnedAllocation> allocator) {
        int n = entries.size();
        if (closed || n == 0) {
            return CompletableFuture.completedFuture(List.of());
        }
        Batch batch = new Batch(entries, allocator, clock.nanoTime());
        metrics.addGauge(SsdGauge.PREFETCH_QUEUE_PENDING, n);
        if (queue.offer(new Prefetch(batch)) != CommandQueue.Offer.ACCEPTED) {
            metrics.addGauge(SsdGauge.PREFETCH_QUEUE_PENDING, -n);
            metrics.add(SsdCounter.PREFETCH_QUEUE_FULL, n);
            return CompletableFuture.completedFuture(List.of());
        }
        return batch.done;
    }

    @Override
    public int doWork() {
        return queue.drain(this::take, 1);
    }

    private void take(Prefetch p) {
        metrics.addGauge(SsdGauge.PREFETCH_QUEUE_PENDING, -p.batch().entries.size());
        try {
            dispatch(p.batch());
        } catch (RuntimeException e) {
            SsdStore.LOG.error("SSD prefetch dispatcher failed on a batch", e);
        }
    }

    private void dispatch(Batch batch) {
        store.checkShardFiles(); // unthrottled: a removed file must turn this batch's reads into misses
        boolean stop = false;
        for (int i = 0; i < batch.results.length; i++) {
            SsdEntry entry = batch.entries.get(i);
            PinnedAllocation allocation = null;
            if (!stop && !closed) {
                try {
                    allocation = batch.allocator.apply(entry.payloadBytes());
                } catch (RuntimeException e) {
                    SsdStore.LOG.warn(
                            "SSD prefetch could not allocate {} bytes: {}", entry.payloadBytes(), e.toString());
                }
            }
            if (allocation == null) {
                // The result is a prefix: nothing after the first block without memory is worth reading.
                stop = true;
                metrics.increment(SsdCounter.PREFETCH_FAILURES);
                finishOne(batch, i, null);
                continue;
            }
            metrics.addGauge(SsdGauge.PREFETCH_INFLIGHT, 1);
            if (!io.submit(new Read(batch, i, entry, allocation), () -> closed)) {
                allocation.release();
                metrics.addGauge(SsdGauge.PREFETCH_INFLIGHT, -1);
                metrics.increment(SsdCounter.PREFETCH_FAILURES);
                stop = true;
                finishOne(batch, i, null);
            }
        }
    }

    private void readOne(Batch batch, int slot, SsdEntry entry, PinnedAllocation allocation) {
        SealedBlock block = null;
        try {
            SsdShard shard = entry.shard;
            if (!shard.healthy()) {
                return;
            }
            long length = entry.payloadBytes();
            long n = shard.file().read(allocation.address(), length, entry.fileOffset() + entry.headerBytes);
            if (n != length) {
                throw new SsdIoException(
                        SsdErrorKind.SHORT_READ,
                        0,
                        shard.path() + ": read " + n + " of " + length + " bytes at " + entry.fileOffset());
            }
            shard.bytesRead.add(length);
            if (NativeIo.crc32c(allocation.address(), length) != entry.payloadCrc) {
                if (index.isLive(entry)) {
                    store.onChecksumMismatch(entry);
                } // else: overwritten during the read, which is why the bytes differ
                return;
            }
            if (!index.isLive(entry)) {
                return; // the ring reused the entry while it was read: the bytes may be a mix
            }
            block = entry.layout.rebuild(allocation);
            metrics.increment(SsdCounter.PREFETCH_BLOCKS);
            metrics.add(SsdCounter.PREFETCH_BYTES, length);
        } catch (SsdIoException e) {
            store.onIoError(entry.shard, e);
        } catch (RuntimeException e) {
            SsdStore.LOG.error("SSD read of {} failed", entry, e);
        } finally {
            allocation.release(); // the rebuilt block's slots hold their own references
            if (block == null) {
                metrics.increment(SsdCounter.PREFETCH_FAILURES);
            }
            metrics.addGauge(SsdGauge.PREFETCH_INFLIGHT, -1);
            io.done();
            finishOne(batch, slot, block);
        }
    }

    /** A read a dead worker left queued: no bytes, the memory goes back, the batch learns of a gap. */
    private void abandon(Batch batch, int slot, PinnedAllocation allocation) {
        allocation.release();
        metrics.increment(SsdCounter.PREFETCH_FAILURES);
        metrics.addGauge(SsdGauge.PREFETCH_INFLIGHT, -1);
        io.done();
        finishOne(batch, slot, null);
    }

    /** {@code block} null: that block could not be read (no memory, an I/O failure, a stopped worker). */
    private void finishOne(Batch batch, int slot, @Nullable SealedBlock block) {
        batch.results[slot] = block;
        if (batch.remaining.decrementAndGet() != 0) {
            return;
        }
        List<SealedBlock> prefix = new ArrayList<>(batch.results.length);
        boolean gap = false;
        for (SealedBlock b : batch.results) {
            if (b == null) {
                gap = true;
            } else if (gap) {
                b.release();
            } else {
                prefix.add(b);
            }
        }
        metrics.prefetchDuration().recordNanos(clock.nanoTime() - batch.startedNanos);
        batch.done.complete(prefix);
    }

    @Override
    public void onClose() {
        for (Prefetch p : queue.close()) {
            metrics.addGauge(SsdGauge.PREFETCH_QUEUE_PENDING, -p.batch().entries.size());
            p.batch().done.complete(List.of());
        }
    }

    /** Stops after the reads in progress; queued batches complete empty. Idempotent. */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        queue.stopAccepting();
        dispatcher.close(STOP_TIMEOUT_NANOS, TimeUnit.NANOSECONDS);
        io.close(STOP_TIMEOUT_NANOS);
        AgentGroup group = agents;
        if (group != null) {
            group.remove(dispatcher);
        }
    }
}
