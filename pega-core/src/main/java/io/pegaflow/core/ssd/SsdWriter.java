package io.pegaflow.core.ssd;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.kernel.agent.Agent;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.AgentRunner;
import io.pegaflow.kernel.agent.CommandQueue;
import io.pegaflow.sys.OffHeap;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;

/**
 * The write path ({@code docs/ssd.md}): a bounded queue of batches, one dispatcher agent, and {@code writeInflight} I/O
 * worker agents ({@link IoWorkers}), each writing one block per {@code pwritev} (header and every segment, straight
 * from pool memory) and then committing it in the index.
 *
 * <p>Queued blocks are held without a reference, like the reference's weak refs: the dispatcher upgrades with
 * {@link SealedBlock#tryRetain()}, so a block evicted from RAM before its turn is skipped instead of pinning pool
 * memory while it waits. The I/O worker releases the reference after the write.
 *
 * <p>{@link #flush()} is a barrier: it completes once everything queued before it has been written and committed,
 * or exceptionally when that took longer than {@link #FLUSH_TIMEOUT_NANOS}.
 */
final class SsdWriter implements Agent {
    /** The longest a flush waits to be queued, and then for the writes before it. */
    static final long FLUSH_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);

    private static final long MAX_IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final SsdStore store;
    private final SsdIndex index;
    private final SsdMetrics metrics;
    private final CommandQueue<Command> queue;
    private final IoWorkers<Write> io;
    private final AgentRunner dispatcher;
    private final ConcurrentLinkedQueue<IoScratch> scratches = new ConcurrentLinkedQueue<>();
    private final ThreadLocal<IoScratch> scratch = ThreadLocal.withInitial(() -> {
        IoScratch s = new IoScratch(EntryDescriptor.MAX_HEADER_BYTES, 256);
        scratches.add(s);
        return s;
    });
    private volatile boolean closed;
    private volatile @Nullable AgentGroup agents; // set by start()

    private sealed interface Command permits Batch, Flush {}

    private record Batch(List<BlockKey> keys, List<SealedBlock> blocks) implements Command {}

    private record Flush(CompletableFuture<Void> done) implements Command {}

    /** One block write, holding the block's reference until it is done. */
    private record Write(SsdEntry entry, SealedBlock block) {}

    SsdWriter(SsdStore store, SsdIndex index, SsdMetrics metrics, int queueDepth, int inflight) {
        this.store = store;
        this.index = index;
        this.metrics = metrics;
        this.queue = new CommandQueue<>(Command.class, queueDepth);
        this.io = new IoWorkers<>(
                "pega-ssd-write",
                Write.class,
                inflight,
                w -> writeOne(w.entry(), w.block()),
                w -> done(w.entry(), w.block(), false));
        this.dispatcher = new AgentRunner(this, queue.idleStrategy(MAX_IDLE_NANOS));
    }

    void start(AgentGroup group) {
        this.agents = group;
        io.start(group);
        group.add(dispatcher.start());
    }

    @Override
    public String roleName() {
        return "pega-ssd-writer";
    }

    /** Queues a batch without blocking; a full queue drops it (counted). Holds no references. */
    void offer(List<BlockKey> keys, List<SealedBlock> blocks) {
        int n = keys.size();
        if (closed || n == 0) {
            return;
        }
        metrics.addGauge(SsdGauge.WRITE_QUEUE_PENDING, n);
        if (queue.offer(new Batch(List.copyOf(keys), List.copyOf(blocks))) != CommandQueue.Offer.ACCEPTED) {
            metrics.addGauge(SsdGauge.WRITE_QUEUE_PENDING, -n);
            metrics.add(SsdCounter.WRITE_QUEUE_FULL, n);
        }
    }

    /** Completes when everything queued before has been written and committed (or failed). */
    CompletableFuture<Void> flush() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        switch (queue.offer(new Flush(done), FLUSH_TIMEOUT_NANOS)) {
            case ACCEPTED -> {}
            case CLOSED -> done.complete(null);
            case FULL -> done.completeExceptionally(new TimeoutException("SSD write queue stayed full"));
        }
        return done;
    }

    @Override
    public int doWork() {
        return queue.drain(this::handle, 1);
    }

    private void handle(Command command) {
        try {
            if (command instanceof Batch batch) {
                write(batch);
            } else if (command instanceof Flush flush) {
                if (io.awaitIdle(FLUSH_TIMEOUT_NANOS)) {
                    flush.done().complete(null);
                } else {
                    flush.done().completeExceptionally(new TimeoutException("SSD writes still in flight"));
                }
            }
        } catch (RuntimeException e) {
            SsdStore.LOG.error("SSD writer failed on a batch", e);
        }
    }

    private void write(Batch batch) {
        int n = batch.keys().size();
        metrics.addGauge(SsdGauge.WRITE_QUEUE_PENDING, -n);
        store.checkFiles();
        List<BlockKey> keys = new ArrayList<>(n);
        List<SealedBlock> held = new ArrayList<>(n);
        List<SlotLayout> layouts = new ArrayList<>(n);
        int[] headerBytes = new int[n];
        for (int i = 0; i < n; i++) {
            SealedBlock block = batch.blocks().get(i);
            if (!block.tryRetain()) {
                metrics.increment(SsdCounter.WRITE_SKIPPED_FREED);
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
            metrics.addGauge(SsdGauge.WRITE_INFLIGHT, 1);
            if (!io.submit(new Write(entry, block), () -> closed)) {
                finish(entry, block, false); // stopping: the entry is given up, the reference goes back
            }
        }
    }

    private void writeOne(SsdEntry entry, SealedBlock block) {
        boolean ok = false;
        try {
            if (!index.isLive(entry)) {
                metrics.increment(SsdCounter.WRITE_OVERWRITTEN);
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
                SlotData slot = java.util.Objects.requireNonNull(block.slot(i), "i < slotCount");
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
            metrics.add(SsdCounter.WRITE_BYTES, entry.totalBytes());
            ok = true;
        } catch (SsdIoException e) {
            metrics.increment(SsdCounter.WRITE_FAILURES);
            store.onIoError(entry.shard, e);
        } catch (RuntimeException e) {
            metrics.increment(SsdCounter.WRITE_FAILURES);
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

    /** An I/O worker's last step for one block: commit or give up the entry, drop the reference and the permit. */
    private void done(SsdEntry entry, SealedBlock block, boolean ok) {
        try {
            finish(entry, block, ok);
        } finally {
            io.done();
        }
    }

    private void finish(SsdEntry entry, SealedBlock block, boolean ok) {
        try {
            boolean committed = index.commit(entry, ok);
            if (committed) {
                metrics.increment(SsdCounter.WRITE_BLOCKS);
            } else if (ok) {
                metrics.increment(SsdCounter.WRITE_OVERWRITTEN);
            }
        } finally {
            block.release();
            metrics.addGauge(SsdGauge.WRITE_INFLIGHT, -1);
        }
    }

    @Override
    public void onClose() {
        for (Command command : queue.close()) {
            if (command instanceof Flush flush) {
                flush.done().complete(null);
            } else if (command instanceof Batch batch) {
                metrics.addGauge(SsdGauge.WRITE_QUEUE_PENDING, -batch.keys().size());
            }
        }
    }

    /**
     * Stops after the batch in progress (its blocks not yet handed to a worker are given up); queued batches are
     * dropped (they hold no references); waits for the writes in flight. Idempotent.
     */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        onClose(); // queued batches are dropped, not written
        dispatcher.close(FLUSH_TIMEOUT_NANOS, TimeUnit.NANOSECONDS);
        io.close(FLUSH_TIMEOUT_NANOS);
        AgentGroup group = agents;
        if (group != null) {
            group.remove(dispatcher);
        }
        for (IoScratch s; (s = scratches.poll()) != null; ) {
            s.close();
        }
    }
}
