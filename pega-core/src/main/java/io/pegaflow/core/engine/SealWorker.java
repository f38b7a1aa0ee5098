package io.pegaflow.core.engine;

import io.pegaflow.core.agent.NamedThreadFactory;
import io.pegaflow.core.agent.NanoClock;
import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.core.cache.BlockCache;
import io.pegaflow.core.cache.InsertOutcome;
import io.pegaflow.core.metrics.EngineMetrics;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The single sealing thread: assembles slots from Save batches into complete blocks and inserts them into the RAM
 * cache (spec/storage.md §2.6).
 *
 * <p>Why one thread: a block's slots arrive from different workers (TP ranks, pipeline stages) in any order; owning
 * the in-flight map on one thread needs no locks and keeps insertion order equal to arrival order. Other threads
 * talk to it only through its queue. It drains everything queued per wake-up and inserts each batch's sealed blocks
 * under one cache lock acquisition.
 *
 * <p>Differences from the reference, on purpose: a save of a key that is already sealed and resident is dropped at
 * once instead of leaving an in-flight entry that never completes (it leaked until the 300 s GC).
 */
final class SealWorker implements PoolReclaimer.SealBarrier, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SealWorker.class);

    private final BlockCache cache;
    private final EngineMetrics metrics;
    private final NanoClock clock;
    private final SealListener listener;
    private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private final Map<BlockKey, Inflight> inflight = new HashMap<>();
    private final Thread thread;
    private final AtomicBoolean closed = new AtomicBoolean();

    /** Told about blocks that just entered the cache (metaserver announcements, SSD spill). Runs on this thread. */
    interface SealListener {
        void onInserted(String namespace, List<BlockKey> keys, List<SealedBlock> blocks);
    }

    private record Flush(CompletableFuture<Void> done) {}

    private record Gc(long maxAgeNanos, CompletableFuture<Integer> done) {}

    private static final Object STOP = new Object();

    private static final class Inflight {
        final SlotData[] slots;
        final long createdNanos;
        int remaining;
        long footprint;

        Inflight(int totalSlots, long createdNanos) {
            this.slots = new SlotData[totalSlots];
            this.remaining = totalSlots;
            this.createdNanos = createdNanos;
        }
    }

    SealWorker(BlockCache cache, EngineMetrics metrics, NanoClock clock, SealListener listener) {
        this.cache = cache;
        this.metrics = metrics;
        this.clock = clock;
        this.listener = listener;
        this.thread = new NamedThreadFactory("pega-seal").newThread(this::run);
        this.thread.start();
    }

    void submit(SealBatch batch) {
        if (closed.get()) {
            releaseAll(batch);
            return;
        }
        queue.add(batch);
    }

    /** Completes when every batch submitted before it has been sealed or parked. */
    CompletableFuture<Void> flush() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (closed.get()) {
            done.complete(null);
        } else {
            queue.add(new Flush(done));
        }
        return done;
    }

    /** The reclaimer's last resort before "pool exhausted": let queued Saves become evictable. Never throws. */
    @Override
    public void awaitPendingSeals() {
        try {
            flush().get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("waiting for pending seals failed: {}", e.toString());
        }
    }

    /** Drops in-flight blocks older than {@code maxAgeNanos}; completes with how many. */
    CompletableFuture<Integer> gc(long maxAgeNanos) {
        CompletableFuture<Integer> done = new CompletableFuture<>();
        queue.add(new Gc(maxAgeNanos, done));
        return done;
    }

    private void run() {
        List<Object> drained = new ArrayList<>();
        try {
            for (; ; ) {
                drained.add(queue.take());
                queue.drainTo(drained);
                for (int i = 0; i < drained.size(); i++) {
                    Object command = drained.get(i);
                    if (command == STOP) {
                        queue.addAll(drained.subList(i + 1, drained.size()));
                        dropAllInflight();
                        return;
                    }
                    handle(command);
                }
                drained.clear();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void handle(Object command) {
        try {
            if (command instanceof SealBatch batch) {
                seal(batch);
            } else if (command instanceof Flush flush) {
                flush.done().complete(null);
            } else if (command instanceof Gc gc) {
                gc.done().complete(collect(gc.maxAgeNanos()));
            }
        } catch (RuntimeException | OutOfMemoryError e) {
            // A listener or cache bug, or one batch too large to seal, must not kill the only sealing thread: every
            // later Save of every tenant would pin its memory forever.
            LOG.error("sealing worker failed on {}", command.getClass().getSimpleName(), e);
        }
    }

    private void seal(SealBatch batch) {
        int total = batch.totalSlots();
        List<BlockKey> sealedKeys = new ArrayList<>(batch.keys().length);
        List<SealedBlock> sealedBlocks = new ArrayList<>(batch.keys().length);
        int layers = batch.layerSlots().length;
        for (int k = 0; k < batch.keys().length; k++) {
            BlockKey key = batch.keys()[k];
            Inflight parked = inflight.get(key);
            if (parked == null && coversAllSlots(batch, k, total)) {
                SlotData[] slots = new SlotData[total];
                for (int l = 0; l < layers; l++) {
                    slots[batch.layerSlots()[l]] = batch.data()[l][k];
                }
                sealedKeys.add(key);
                sealedBlocks.add(new SealedBlock(slots));
                continue;
            }
            if (parked == null) {
                if (cache.contains(key)) {
                    // Late duplicate of a resident block: nothing to complete, drop now.
                    metrics.sealDuplicatesDropped.increment();
                    releaseKey(batch, k);
                    continue;
                }
                parked = new Inflight(total, clock.nanoTime());
                inflight.put(key, parked);
            } else if (parked.slots.length != total) {
                LOG.error(
                        "dropping slots of {}: in-flight block has {} slots, batch has {}",
                        key,
                        parked.slots.length,
                        total);
                releaseKey(batch, k);
                continue;
            }
            for (int l = 0; l < layers; l++) {
                SlotData slot = batch.data()[l][k];
                if (slot == null) {
                    continue;
                }
                int index = batch.layerSlots()[l];
                if (index >= total || parked.slots[index] != null) {
                    slot.release();
                    continue;
                }
                parked.slots[index] = slot;
                parked.remaining--;
                parked.footprint += slot.footprintBytes();
                metrics.inflightBytes.addAndGet(slot.footprintBytes());
            }
            if (parked.remaining == 0) {
                inflight.remove(key);
                metrics.inflightBytes.addAndGet(-parked.footprint);
                sealedKeys.add(key);
                sealedBlocks.add(new SealedBlock(parked.slots));
            }
        }
        insert(batch.namespace(), sealedKeys, sealedBlocks);
    }

    /** The fast path: this batch alone carries every slot of the key exactly once. */
    private static boolean coversAllSlots(SealBatch batch, int k, int total) {
        int layers = batch.layerSlots().length;
        if (layers != total) {
            return false;
        }
        long seen = 0;
        boolean[] big = total > 64 ? new boolean[total] : null;
        for (int l = 0; l < layers; l++) {
            int index = batch.layerSlots()[l];
            if (batch.data()[l][k] == null || index < 0 || index >= total) {
                return false;
            }
            if (big == null) {
                if ((seen & (1L << index)) != 0) {
                    return false;
                }
                seen |= 1L << index;
            } else {
                if (big[index]) {
                    return false;
                }
                big[index] = true;
            }
        }
        return true;
    }

    private void insert(String namespace, List<BlockKey> keys, List<SealedBlock> blocks) {
        if (keys.isEmpty()) {
            return;
        }
        InsertOutcome[] outcomes = new InsertOutcome[keys.size()];
        cache.insertAll(keys, blocks, outcomes);
        List<BlockKey> insertedKeys = new ArrayList<>(keys.size());
        List<SealedBlock> insertedBlocks = new ArrayList<>(keys.size());
        for (int i = 0; i < outcomes.length; i++) {
            switch (outcomes[i]) {
                case INSERTED -> {
                    metrics.cacheInsertions.increment();
                    insertedKeys.add(keys.get(i));
                    insertedBlocks.add(blocks.get(i));
                }
                case REJECTED -> {
                    metrics.cacheAdmissionRejections.increment();
                    blocks.get(i).release();
                }
                case ALREADY_EXISTS -> blocks.get(i).release();
            }
        }
        if (!insertedKeys.isEmpty()) {
            listener.onInserted(namespace, insertedKeys, insertedBlocks);
        }
    }

    private int collect(long maxAgeNanos) {
        long now = clock.nanoTime();
        int removed = 0;
        Iterator<Map.Entry<BlockKey, Inflight>> it = inflight.entrySet().iterator();
        while (it.hasNext()) {
            Inflight parked = it.next().getValue();
            if (now - parked.createdNanos >= maxAgeNanos) {
                it.remove();
                releaseInflight(parked);
                removed++;
            }
        }
        if (removed > 0) {
            metrics.inflightGcCleaned.add(removed);
            LOG.warn("dropped {} incomplete blocks older than {} s", removed, maxAgeNanos / 1_000_000_000L);
        }
        return removed;
    }

    private void releaseInflight(Inflight parked) {
        for (SlotData slot : parked.slots) {
            if (slot != null) {
                slot.release();
            }
        }
        metrics.inflightBytes.addAndGet(-parked.footprint);
    }

    private void dropAllInflight() {
        inflight.values().forEach(this::releaseInflight);
        inflight.clear();
        for (Object command; (command = queue.poll()) != null; ) {
            if (command instanceof SealBatch batch) {
                releaseAll(batch);
            } else if (command instanceof Flush flush) {
                flush.done().complete(null);
            } else if (command instanceof Gc gc) {
                gc.done().complete(0);
            }
        }
    }

    private static void releaseKey(SealBatch batch, int k) {
        for (SlotData[] layer : batch.data()) {
            if (layer[k] != null) {
                layer[k].release();
            }
        }
    }

    private static void releaseAll(SealBatch batch) {
        for (int k = 0; k < batch.keys().length; k++) {
            releaseKey(batch, k);
        }
    }

    /** Number of blocks waiting for slots (test and metrics view; approximate while running). */
    int inflightCount() {
        return inflight.size();
    }

    /** Stops the thread after everything queued so far, releasing all parked and queued slots. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        queue.add(STOP);
        try {
            thread.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
