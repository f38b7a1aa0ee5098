package io.pegaflow.core.ssd;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.tier.BackingTier;
import io.pegaflow.core.tier.SealedBlockSpill;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;

/**
 * The SSD store as the engine's backing tier and spill target.
 *
 * <ul>
 *   <li>As {@link SealedBlockSpill}: every block the sealing worker inserts into the RAM cache is offered
 *       to the store's write queue (write-behind, no reference held while queued).
 *   <li>As {@link BackingTier}: a query's RAM-miss suffix is fetched from SSD, bounded by {@code max-prefetch-blocks}
 *       (spec/storage.md §5): of the {@code found} readable blocks, at most {@code max - reserved} are read; the rest
 *       count as backpressure and end the prefix. The reservation is released when the read completes.
 * </ul>
 *
 * <p>Fetched blocks land in pool memory from the allocator bound with {@link #bindAllocator} (the engine's
 * allocate-with-eviction); until one is bound every fetch answers empty. Thread-safe.
 */
public final class SsdBackingTier implements BackingTier, SealedBlockSpill {
    /** The reference server's default ({@code --max-prefetch-blocks}). */
    public static final int DEFAULT_MAX_PREFETCH_BLOCKS = 800;

    private final SsdStore store;
    private final int maxPrefetchBlocks;
    private final AtomicLong reserved;
    private volatile LongFunction<PinnedAllocation> allocator;

    public SsdBackingTier(SsdStore store, int maxPrefetchBlocks) {
        if (maxPrefetchBlocks < 1) {
            throw new IllegalArgumentException(
                    "pega.ssd.max-prefetch-blocks: " + maxPrefetchBlocks + " (expected: >= 1)");
        }
        this.store = store;
        this.maxPrefetchBlocks = maxPrefetchBlocks;
        this.reserved = store.metrics().prefetchReserved;
    }

    /** Binds where fetched blocks get their memory, e.g. {@code engine::allocateWithReclaim}. */
    public void bindAllocator(LongFunction<PinnedAllocation> allocator) {
        this.allocator = allocator;
    }

    public SsdStore store() {
        return store;
    }

    @Override
    public String tierName() {
        return "ssd";
    }

    @SuppressWarnings("FutureReturnValueIgnored") // the budget-return stage below
    @Override
    public CompletableFuture<List<SealedBlock>> fetchPrefix(List<BlockKey> keys) {
        LongFunction<PinnedAllocation> target = allocator;
        if (target == null || keys.isEmpty()) {
            return CompletableFuture.completedFuture(List.of());
        }
        int found = store.readablePrefix(keys);
        if (found == 0) {
            return CompletableFuture.completedFuture(List.of());
        }
        int granted = reserve(found);
        if (granted < found) {
            store.metrics().prefetchBackpressureBlocks.add(found - granted);
        }
        if (granted == 0) {
            return CompletableFuture.completedFuture(List.of());
        }
        CompletableFuture<List<SealedBlock>> read;
        try {
            read = store.readPrefix(keys.subList(0, granted), target);
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

    @Override
    public void offer(List<BlockKey> keys, List<SealedBlock> blocks) {
        store.offer(keys, blocks);
    }

    public int maxPrefetchBlocks() {
        return maxPrefetchBlocks;
    }
}
