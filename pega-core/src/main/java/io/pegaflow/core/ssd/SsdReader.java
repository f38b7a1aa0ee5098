package io.pegaflow.core.ssd;

import io.pegaflow.core.agent.NamedThreadFactory;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.memory.PinnedAllocation;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongFunction;

/**
 * The read path (spec/storage.md §4.5): a bounded queue of prefetch batches, one dispatcher thread that allocates
 * pool memory for each block (which may evict RAM blocks), and a fixed pool of {@code prefetchInflight} I/O threads,
 * each reading one block's payload with one {@code pread} straight into its allocation.
 *
 * <p>A read is accepted only if it returned every byte, its CRC32C matches the one recorded at write time, and the
 * ring has not reused the entry meanwhile. The batch's result is the blocks in request order up to the first one that
 * failed; blocks after that gap are released (the query path only takes a contiguous prefix).
 *
 * <p>Unlike the reference, each block gets its own allocation (not one per batch), so a prefetched block's memory
 * returns to the pool when that block goes, not when its whole batch does.
 */
final class SsdReader implements AutoCloseable {
    private static final Object STOP = new Object();

    private final SsdStore store;
    private final SsdIndex index;
    private final SsdMetrics metrics;
    private final ArrayBlockingQueue<Object> queue;
    private final int inflight;
    private final Semaphore permits;
    private final ExecutorService io;
    private final Thread dispatcher;
    private volatile boolean closed;

    private static final class Batch {
        final List<SsdEntry> entries;
        final LongFunction<PinnedAllocation> allocator;
        final CompletableFuture<List<SealedBlock>> done = new CompletableFuture<>();
        final long startedNanos;
        final SealedBlock[] results;
        final AtomicInteger remaining;

        Batch(List<SsdEntry> entries, LongFunction<PinnedAllocation> allocator, long startedNanos) {
            this.entries = entries;
            this.allocator = allocator;
            this.startedNanos = startedNanos;
            this.results = new SealedBlock[entries.size()];
            this.remaining = new AtomicInteger(entries.size());
        }
    }

    SsdReader(SsdStore store, SsdIndex index, SsdMetrics metrics, int queueDepth, int inflight) {
        this.store = store;
        this.index = index;
        this.metrics = metrics;
        this.queue = new ArrayBlockingQueue<>(queueDepth + 1); // one slot kept for STOP
        this.inflight = inflight;
        this.permits = new Semaphore(inflight);
        this.io = Executors.newFixedThreadPool(inflight, new NamedThreadFactory("pega-ssd-read"));
        this.dispatcher = new NamedThreadFactory("pega-ssd-prefetch").newThread(this::run);
        this.dispatcher.start();
    }

    /** Queues a read of {@code entries} without blocking; a full queue answers an empty result at once (counted). */
    CompletableFuture<List<SealedBlock>> submit(List<SsdEntry> entries, LongFunction<PinnedAllocation> allocator) {
        int n = entries.size();
        if (closed || n == 0) {
            return CompletableFuture.completedFuture(List.of());
        }
        Batch batch = new Batch(entries, allocator, System.nanoTime());
        metrics.prefetchQueuePending.addAndGet(n);
        if (queue.remainingCapacity() <= 1 || !queue.offer(batch)) {
            metrics.prefetchQueuePending.addAndGet(-n);
            metrics.prefetchQueueFull.add(n);
            return CompletableFuture.completedFuture(List.of());
        }
        return batch.done;
    }

    private void run() {
        try {
            for (; ; ) {
                Object command = queue.take();
                if (command == STOP) {
                    break;
                }
                Batch batch = (Batch) command;
                metrics.prefetchQueuePending.addAndGet(-batch.entries.size());
                dispatch(batch);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Object command; (command = queue.poll()) != null; ) {
            if (command instanceof Batch batch) {
                metrics.prefetchQueuePending.addAndGet(-batch.entries.size());
                batch.done.complete(List.of());
            }
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
                metrics.prefetchFailures.increment();
                finishOne(batch, i, null);
                continue;
            }
            PinnedAllocation target = allocation;
            int slot = i;
            permits.acquireUninterruptibly();
            metrics.prefetchInflight.incrementAndGet();
            try {
                io.execute(() -> readOne(batch, slot, entry, target));
            } catch (RuntimeException e) {
                target.release();
                metrics.prefetchInflight.decrementAndGet();
                metrics.prefetchFailures.increment();
                permits.release();
                stop = true;
                finishOne(batch, slot, null);
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
            metrics.prefetchBlocks.increment();
            metrics.prefetchBytes.add(length);
        } catch (SsdIoException e) {
            store.onIoError(entry.shard, e);
        } catch (RuntimeException e) {
            SsdStore.LOG.error("SSD read of {} failed", entry, e);
        } finally {
            allocation.release(); // the rebuilt block's slots hold their own references
            if (block == null) {
                metrics.prefetchFailures.increment();
            }
            metrics.prefetchInflight.decrementAndGet();
            permits.release();
            finishOne(batch, slot, block);
        }
    }

    private void finishOne(Batch batch, int slot, SealedBlock block) {
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
        metrics.prefetchDuration().recordNanos(System.nanoTime() - batch.startedNanos);
        batch.done.complete(prefix);
    }

    /** Stops after the reads in progress; queued batches complete empty. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Object command; (command = queue.poll()) != null; ) {
            if (command instanceof Batch batch) {
                metrics.prefetchQueuePending.addAndGet(-batch.entries.size());
                batch.done.complete(List.of());
            }
        }
        IoLanes.stop(queue, STOP, dispatcher, permits, inflight, io);
    }
}
