package io.pegaflow.core.engine;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.core.cache.BlockCache;
import io.pegaflow.core.cache.InsertOutcome;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.metrics.EngineCounter;
import io.pegaflow.core.metrics.EngineMetrics;
import io.pegaflow.kernel.agent.Agent;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.AgentRunner;
import io.pegaflow.kernel.agent.CommandQueue;
import io.pegaflow.kernel.agent.NanoClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The single sealing agent: assembles slots from Save batches into complete blocks and inserts them into the RAM cache.
 *
 * <p>Why one thread: a block's slots arrive from different workers (TP ranks, pipeline stages) in any order; owning
 * the in-flight map on one thread needs no locks and keeps insertion order equal to arrival order. Other threads
 * talk to it only through its bounded {@link CommandQueue} of {@link SealCommand}s. Each duty cycle drains up to
 * {@link #DRAIN_LIMIT} commands and inserts each batch's sealed blocks under one cache lock acquisition.
 *
 * <p>Bounded and never losing slots: a Save that finds the queue full fails with RESOURCE_EXHAUSTED and its slots go
 * back to the pool; a Save racing the shutdown is refused (UNAVAILABLE) instead of being queued behind the last
 * drain (review E3). Barriers (flush, collection) wait at most the configured deadline.
 *
 * <p>Differences from the reference, on purpose: a save of a key that is already sealed and resident is dropped at
 * once instead of leaving an in-flight entry that never completes (it leaked until the 300 s GC).
 */
final class SealAgent implements Agent, PoolReclaimer.SealBarrier {
    private static final Logger LOG = LoggerFactory.getLogger(SealAgent.class);
    /** Save batches (and barriers) that may wait for the sealer at once. */
    static final int QUEUE_DEPTH = 4096;
    /** Commands handled per duty cycle. */
    static final int DRAIN_LIMIT = 256;

    private static final long MAX_IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final BlockCache cache;
    private final EngineMetrics metrics;
    private final NanoClock clock;
    private final SealListener listener;
    private final long deadlineNanos;
    private final CommandQueue<SealCommand> queue = new CommandQueue<>(SealCommand.class, QUEUE_DEPTH);
    private final Map<BlockKey, Inflight> inflight = new HashMap<>();
    private final AgentRunner runner;
    private volatile @Nullable AgentGroup agents; // set by start()

    /** Told about blocks that just entered the cache (metaserver announcements, SSD spill). Runs on this thread. */
    interface SealListener {
        void onInserted(String namespace, List<BlockKey> keys, List<SealedBlock> blocks);
    }

    record Flush(CompletableFuture<Void> done) implements SealCommand {}

    record Gc(long maxAgeNanos, CompletableFuture<Integer> done) implements SealCommand {}

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

    /** Builds the agent and its runner; nothing runs until {@link #start}. */
    SealAgent(BlockCache cache, EngineMetrics metrics, NanoClock clock, Duration deadline, SealListener listener) {
        this.cache = cache;
        this.metrics = metrics;
        this.clock = clock;
        this.listener = listener;
        this.deadlineNanos = deadline.toNanos();
        this.runner = new AgentRunner(this, queue.idleStrategy(MAX_IDLE_NANOS));
    }

    void start(AgentGroup group) {
        this.agents = group;
        group.add(runner.start());
    }

    @Override
    public String roleName() {
        return "pega-seal";
    }

    /**
     * Hands a Save's slots to the sealer; on refusal they are released here.
     *
     * @throws EngineException RESOURCE_EXHAUSTED when the queue is full, UNAVAILABLE when the engine is stopping
     */
    void submit(SealBatch batch) {
        CommandQueue.Offer offer = queue.offer(batch);
        if (offer == CommandQueue.Offer.ACCEPTED) {
            return;
        }
        releaseAll(batch);
        if (offer == CommandQueue.Offer.FULL) {
            throw EngineException.resourceExhausted("sealing queue is full (" + QUEUE_DEPTH
                    + " saves waiting to be sealed); the save was not stored, retry later");
        }
        if (runner.state() == AgentRunner.State.FAILED) {
            throw EngineException.unavailable("the sealing worker stopped after a failure; restart the server");
        }
        throw EngineException.unavailable("engine is shutting down");
    }

    /** Completes when every batch submitted before it has been sealed or parked (at once once stopped). */
    CompletableFuture<Void> flush() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        switch (queue.offer(new Flush(done), deadlineNanos)) {
            case ACCEPTED -> {}
            case CLOSED -> done.complete(null);
            case FULL -> done.completeExceptionally(new TimeoutException("sealing queue stayed full"));
        }
        return done;
    }

    /** Drops in-flight blocks older than {@code maxAgeNanos}; completes with how many. */
    CompletableFuture<Integer> gc(long maxAgeNanos) {
        CompletableFuture<Integer> done = new CompletableFuture<>();
        if (queue.offer(new Gc(maxAgeNanos, done), deadlineNanos) != CommandQueue.Offer.ACCEPTED) {
            done.complete(0);
        }
        return done;
    }

    /** The reclaimer's last resort before "pool exhausted": let queued Saves become evictable. Never throws. */
    @Override
    public void awaitPendingSeals() {
        try {
            flush().get(deadlineNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("pending seals did not drain within {} ms: {}", deadlineNanos / 1_000_000, e.toString());
        }
    }

    /** The deadline barriers wait, in nanoseconds. */
    long deadlineNanos() {
        return deadlineNanos;
    }

    @Override
    public int doWork() {
        return queue.drain(this::handle, DRAIN_LIMIT);
    }

    private void handle(SealCommand command) {
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
                    metrics.increment(EngineCounter.SEAL_DUPLICATES_DROPPED);
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
                metrics.addInflightBytes(slot.footprintBytes());
            }
            if (parked.remaining == 0) {
                inflight.remove(key);
                metrics.addInflightBytes(-parked.footprint);
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
                    metrics.increment(EngineCounter.CACHE_INSERTIONS);
                    insertedKeys.add(keys.get(i));
                    insertedBlocks.add(blocks.get(i));
                }
                case REJECTED -> {
                    metrics.increment(EngineCounter.CACHE_ADMISSION_REJECTIONS);
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
            metrics.add(EngineCounter.INFLIGHT_GC_CLEANED, removed);
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
        metrics.addInflightBytes(-parked.footprint);
    }

    /** Runs once on stop (or after a failure): completes or releases whatever is still queued and parked. */
    @Override
    public void onClose() {
        for (SealCommand command : queue.close()) {
            if (command instanceof SealBatch batch) {
                releaseAll(batch);
            } else if (command instanceof Flush flush) {
                flush.done().complete(null);
            } else if (command instanceof Gc gc) {
                gc.done().complete(0);
            }
        }
        inflight.values().forEach(this::releaseInflight);
        inflight.clear();
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

    /**
     * Stops after everything queued so far was sealed, releasing all parked slots; later submits are refused.
     * Idempotent.
     */
    void close() {
        queue.stopAccepting();
        runner.close(deadlineNanos, TimeUnit.NANOSECONDS);
        AgentGroup group = agents;
        if (group != null) {
            group.remove(runner);
        }
    }
}
