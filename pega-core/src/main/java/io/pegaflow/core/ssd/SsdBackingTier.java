package io.pegaflow.core.ssd;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.tier.BackingTier;
import io.pegaflow.core.tier.ReclaimingAllocator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The SSD store as the engine's backing tier: a query's RAM-miss suffix is fetched from SSD, bounded by
 * {@code max-prefetch-blocks}: of the {@code found} readable blocks, at most {@code max - reserved} are read; the rest
 * count as backpressure and end the prefix. The reservation is released when the read completes. Fetched blocks land in
 * pool memory from the engine's {@link ReclaimingAllocator}, passed with each fetch. (Writing goes the other way: the
 * store itself is the engine's spill, {@link SsdStore#offer}.)
 *
 * <p>Ownership: the tier owns the store; the engine that owns the tier closes it, and so the store, after the
 * sealing worker stopped and before the pool unmaps. Thread-safe.
 */
public final class SsdBackingTier implements BackingTier {
    /** The reference server's default ({@code --max-prefetch-blocks}). */
    public static final int DEFAULT_MAX_PREFETCH_BLOCKS = 800;

    private final SsdStore store;
    private final int maxPrefetchBlocks;
    private final AtomicLong reserved;

    public SsdBackingTier(SsdStore store, int maxPrefetchBlocks) {
        if (maxPrefetchBlocks < 1) {
            throw new IllegalArgumentException(
                    "pega.ssd.max-prefetch-blocks: " + maxPrefetchBlocks + " (expected: >= 1)");
        }
        this.store = store;
        this.maxPrefetchBlocks = maxPrefetchBlocks;
        this.reserved = store.metricsCells().prefetchReservedCell();
    }

    public SsdStore store() {
        return store;
    }

    @Override
    public String tierName() {
        return "ssd";
    }

    /** {@code O_DIRECT} moves whole 512-byte sectors straight from and into pool memory. */
    @Override
    public long requiredHostAlignmentBytes() {
        return ShardLayoutDescriptor.SSD_ALIGNMENT;
    }

    @SuppressWarnings("FutureReturnValueIgnored") // the budget-return stage below
    @Override
    public CompletableFuture<List<SealedBlock>> fetchPrefix(List<BlockKey> keys, ReclaimingAllocator memory) {
        if (keys.isEmpty()) {
            return CompletableFuture.completedFuture(List.of());
        }
        int found = store.readablePrefix(keys);
        if (found == 0) {
            return CompletableFuture.completedFuture(List.of());
        }
        int granted = reserve(found);
        if (granted < found) {
            store.metricsCells().add(SsdCounter.PREFETCH_BACKPRESSURE_BLOCKS, found - granted);
        }
        if (granted == 0) {
            return CompletableFuture.completedFuture(List.of());
        }
        CompletableFuture<List<SealedBlock>> read;
        try {
            read = store.readPrefix(keys.subList(0, granted), memory::allocate);
        } catch (RuntimeException e) {
            reserved.addAndGet(-granted);
            SsdStore.LOG.error("SSD prefetch failed to start", e);
            return CompletableFuture.completedFuture(List.of());
        }
        // Fire-and-forget: the caller gets the read itself, which never completes exceptionally (the BackingTier
        // contract), and this stage's own action cannot throw.
        read.whenComplete((blocks, error) -> reserved.addAndGet(-granted));
        return read;
    }

    /** Reserves up to {@code wanted} blocks of the budget; returns how many. */
    private int reserve(int wanted) {
        for (; ; ) {
            long current = reserved.get();
            long available = maxPrefetchBlocks - current;
            if (available <= 0) {
                return 0;
            }
            int granted = (int) Math.min(wanted, available);
            if (reserved.compareAndSet(current, current + granted)) {
                return granted;
            }
        }
    }

    public int maxPrefetchBlocks() {
        return maxPrefetchBlocks;
    }

    /** Closes the store: waits for the I/O in progress, then closes the shard files. Idempotent. */
    @Override
    public void close() {
        store.close();
    }
}
