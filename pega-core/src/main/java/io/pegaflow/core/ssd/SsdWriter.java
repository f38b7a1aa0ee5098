package io.pegaflow.core.ssd;

import io.pegaflow.core.agent.NamedThreadFactory;
import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.sys.OffHeap;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

/**
 * The write path (spec/storage.md §4.4): a bounded queue of batches, one dispatcher thread, and a fixed pool of
 * {@code writeInflight} I/O threads, each writing one block per {@code pwritev} (header and every segment, straight
 * from pool memory) and then committing it in the index.
 *
 * <p>Queued blocks are held without a reference, like the reference's weak refs: the dispatcher upgrades with
 * {@link SealedBlock#tryRetain()}, so a block evicted from RAM before its turn is skipped instead of pinning pool
 * memory while it waits. The I/O thread releases the reference after the write.
 *
 * <p>{@link #flush()} is a barrier: it completes once everything queued before it has been written and committed.
 */
final class SsdWriter implements AutoCloseable {
    private static final Object STOP = new Object();

    private final SsdStore store;
    private final SsdIndex index;
    private final SsdMetrics metrics;
    private final ArrayBlockingQueue<Object> queue;
    private final int inflight;
    private final Semaphore permits;
    private final ExecutorService io;
    private final Thread dispatcher;
    private final ConcurrentLinkedQueue<IoScratch> scratches = new ConcurrentLinkedQueue<>();
    private final ThreadLocal<IoScratch> scratch = ThreadLocal.withInitial(() -> {
        IoScratch s = new IoScratch(EntryDescriptor.MAX_HEADER_BYTES, 256);
        scratches.add(s);
        return s;
    });
    private volatile boolean closed;

    private record Batch(List<BlockKey> keys, List<SealedBlock> blocks) {}

    private record Flush(CompletableFuture<Void> done) {}

    SsdWriter(SsdStore store, SsdIndex index, SsdMetrics metrics, int queueDepth, int inflight) {
        this.store = store;
        this.index = index;
        this.metrics = metrics;
        this.queue = new ArrayBlockingQueue<>(queueDepth + 1); // one slot kept for STOP
        this.inflight = inflight;
        this.permits = new Semaphore(inflight);
        this.io = Executors.newFixedThreadPool(inflight, new NamedThreadFactory("pega-ssd-write"));
        this.dispatcher = new NamedThreadFactory("pega-ssd-writer").newThread(this::run);
        this.dispatcher.start();
    }

    /** Queues a batch without blocking; a full queue drops it (counted). Holds no references. */
    void offer(List<BlockKey> keys, List<SealedBlock> blocks) {
        int n = keys.size();
        if (closed || n == 0) {
            return;
        }
        metrics.writeQueuePending.addAndGet(n);
        if (queue.remainingCapacity() <= 1 || !queue.offer(new Batch(List.copyOf(keys), List.copyOf(blocks)))) {
            metrics.writeQueuePending.addAndGet(-n);
            metrics.writeQueueFull.add(n);
        }
    }

    /** Completes when everything queued before has been written and committed (or failed). */
    CompletableFuture<Void> flush() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (closed) {
            done.complete(null);
            return done;
        }
        try {
            while (!queue.offer(new Flush(done), 10, TimeUnit.MILLISECONDS)) {
                if (closed) {
                    done.complete(null);
                    break;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            done.complete(null);
        }
        return done;
    }

    private void run() {
        try {
            for (; ; ) {
                Object command = queue.take();
                if (command == STOP) {
                    break;
                }
                try {
                    if (command instanceof Batch batch) {
                        write(batch);
                    } else if (command instanceof Flush flush) {
                        permits.acquire(inflight);
                        permits.release(inflight);
                        flush.done().complete(null);
                    }
                } catch (RuntimeException e) {
                    SsdStore.LOG.error("SSD writer failed on a batch", e);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Object command; (command = queue.poll()) != null; ) {
            if (command instanceof Flush flush) {
                flush.done().complete(null);
            }
        }
    }

    private void write(Batch batch) throws InterruptedException {
        int n = batch.keys().size();
        metrics.writeQueuePending.addAndGet(-n);
        store.checkFiles();
        List<BlockKey> keys = new ArrayList<>(n);
        List<SealedBlock> held = new ArrayList<>(n);
        List<SlotLayout> layouts = new ArrayList<>(n);
        int[] headerBytes = new int[n];
        for (int i = 0; i < n; i++) {
            SealedBlock block = batch.blocks().get(i);
            if (!block.tryRetain()) {
                metrics.writeSkippedFreed.increment();
                continue;
            }
            SlotLayout layout = SlotLayout.of(block);
            BlockKey key = batch.keys().get(i);
            if (layout == null || layout.payloadBytes() == 0 || !EntryDescriptor.fits(key, layout)) {
                store.onSkipped(layout == null ? SsdErrorKind.UNALIGNED : SsdErrorKind.OVERSIZED, key);
                block.release();
                continue;
            }
            headerBytes[keys.size()] = EntryDescriptor.headerBytes(key, layout);
            keys.add(key);
            held.add(block);
            layouts.add(layout);
        }
        if (keys.isEmpty()) {
            return;
        }
        SsdEntry[] entries = index.prepare(keys, layouts, headerBytes, metrics);
        for (int i = 0; i < entries.length; i++) {
            SsdEntry entry = entries[i];
            SealedBlock block = held.get(i);
            if (entry == null) {
                block.release();
                continue;
            }
            permits.acquire();
            metrics.writeInflight.incrementAndGet();
            try {
                io.execute(() -> writeOne(entry, block));
            } catch (RejectedExecutionException e) {
                done(entry, block, false);
            }
        }
    }

    private void writeOne(SsdEntry entry, SealedBlock block) {
        boolean ok = false;
        try {
            if (!index.isLive(entry)) {
                metrics.writeOverwritten.increment();
                return;
            }
            IoScratch s = scratch.get();
            int iovs = 1;
            long iov = s.iovAddress(2 + 2 * block.slotCount());
            NativeIo.putIovec(iov, 0, s.headerAddress(), entry.headerBytes);
            CRC32C crc = new CRC32C();
            long runBase = 0;
            long runLength = 0;
            for (int i = 0; i < block.slotCount(); i++) {
                SlotData slot = block.slot(i);
                for (int seg = 0; seg < slot.segments(); seg++) {
                    long address = slot.address(seg);
                    long length = slot.length(seg);
                    NativeIo.update(crc, address, length);
                    if (runLength > 0 && runBase + runLength == address) {
                        runLength += length; // adjacent in memory (a batch allocation): one iovec
                        continue;
                    }
                    if (runLength > 0) {
                        NativeIo.putIovec(iov, iovs++, runBase, runLength);
                    }
                    runBase = address;
                    runLength = length;
                }
            }
            NativeIo.putIovec(iov, iovs++, runBase, runLength);
            long padding = entry.totalBytes() - entry.headerBytes - entry.payloadBytes();
            if (padding > 0) {
                NativeIo.putIovec(iov, iovs++, s.zeroAddress(), padding); // whole 4 KiB blocks only
            }
            int payloadCrc = (int) crc.getValue();
            EntryDescriptor.encode(
                    s.headerView(entry.headerBytes),
                    entry.headerBytes,
                    entry.shard.formatId(),
                    entry.begin,
                    entry.key,
                    entry.layout,
                    payloadCrc);
            writeIovecs(entry, iov, iovs);
            entry.payloadCrc = payloadCrc;
            entry.shard.bytesWritten.add(entry.totalBytes());
            metrics.writeBytes.add(entry.totalBytes());
            ok = true;
        } catch (SsdIoException e) {
            metrics.writeFailures.increment();
            store.onIoError(entry.shard, e);
        } catch (RuntimeException e) {
            metrics.writeFailures.increment();
            SsdStore.LOG.error("SSD write of {} failed", entry, e);
        } finally {
            done(entry, block, ok);
        }
    }

    /** Issues the iovecs in {@link NativeIo#IOV_MAX} chunks at consecutive file offsets; a short count fails. */
    private static void writeIovecs(SsdEntry entry, long iov, int iovs) {
        long offset = entry.fileOffset();
        for (int from = 0; from < iovs; from += NativeIo.IOV_MAX) {
            int count = Math.min(NativeIo.IOV_MAX, iovs - from);
            long expected = 0;
            for (int i = from; i < from + count; i++) {
                expected += OffHeap.getLong(iov + (long) i * NativeIo.IOVEC_BYTES + 8);
            }
            long n = entry.shard.file().writev(iov + (long) from * NativeIo.IOVEC_BYTES, count, offset);
            if (n != expected) {
                throw new SsdIoException(
                        SsdErrorKind.SHORT_WRITE,
                        0,
                        entry.shard.path() + ": wrote " + n + " of " + expected + " bytes at " + offset);
            }
            offset += n;
        }
    }

    private void done(SsdEntry entry, SealedBlock block, boolean ok) {
        try {
            boolean committed = index.commit(entry, ok);
            if (committed) {
                metrics.writeBlocks.increment();
            } else if (ok) {
                metrics.writeOverwritten.increment();
            }
        } finally {
            block.release();
            metrics.writeInflight.decrementAndGet();
            permits.release();
        }
    }

    /** Stops after the batch in progress; queued batches are dropped (they hold no references). Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Object command; (command = queue.poll()) != null; ) {
            if (command instanceof Flush flush) {
                flush.done().complete(null);
            } else if (command instanceof Batch batch) {
                metrics.writeQueuePending.addAndGet(-batch.keys().size());
            }
        }
        IoLanes.stop(queue, STOP, dispatcher, permits, inflight, io);
        for (IoScratch s; (s = scratches.poll()) != null; ) {
            s.close();
        }
    }
}
