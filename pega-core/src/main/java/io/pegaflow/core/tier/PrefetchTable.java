package io.pegaflow.core.tier;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.cache.BlockCache;
import io.pegaflow.core.cache.InsertOutcome;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.metrics.EngineCounter;
import io.pegaflow.core.metrics.EngineMetrics;
import io.pegaflow.kernel.agent.NanoClock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Prefetch state per (instance, req_id): {@code NONE -> RUNNING -> (poll after completion) NONE} with a Ready result
 * delivered exactly once.
 *
 * <p>Better than the reference: its state was keyed by req_id alone and a poll got the original query's answer even
 * when its hashes had changed. Here a task belongs to one instance and one hash list; a poll with different hashes
 * discards the task (its blocks are released when its fetch completes) and starts over.
 *
 * <p>Ownership: a running task holds the RAM-prefix references captured at scan time and, once complete, the fetched
 * blocks' references. Delivery hands them to the caller (the lease); discard and GC release them.
 *
 * <p>Announcement: fetched blocks the RAM index accepts are findable here like sealed ones, so the table tells the
 * index listeners (a block fetched from a peer makes this node one more owner in the metaserver).
 *
 * <p>Attribution: a delivery is the query's decision, so it builds the query's {@link TierAttribution} (RAM prefix,
 * each tier's share, misses) and records it once.
 */
public final class PrefetchTable {
    private final TierChain chain;
    private final ReclaimingAllocator memory;
    private final BlockCache cache;
    private final EngineMetrics metrics;
    private final NanoClock clock;
    private final Map<TaskKey, Task> tasks = new HashMap<>();
    private final int maxPerInstance;
    private final Consumer<List<BlockKey>> inserted;

    private record TaskKey(String instanceId, String reqId) {}

    private static final class Task {
        final List<BlockKey> keys;
        final boolean whole;
        final List<SealedBlock> prefix;
        final CompletableFuture<TierChain.Fetched> fetch;
        final long startedNanos;

        Task(
                List<BlockKey> keys,
                boolean whole,
                List<SealedBlock> prefix,
                CompletableFuture<TierChain.Fetched> fetch,
                long started) {
            this.keys = keys;
            this.whole = whole;
            this.prefix = prefix;
            this.fetch = fetch;
            this.startedNanos = started;
        }

        /** Releases everything now, or when the fetch completes if it is still running. */
        @SuppressWarnings("FutureReturnValueIgnored")
        void discard() {
            prefix.forEach(SealedBlock::release);
            // Fire-and-forget: nobody waits for a discarded task, and a chain fetch never completes exceptionally, so
            // the dependent stage has no failure to report.
            fetch.thenAccept(fetched -> fetched.blocks().forEach(SealedBlock::release));
        }
    }

    /** The outcome of a poll: still loading, a delivered result (blocks with references), or nothing pending. */
    public record Poll(boolean loading, @Nullable List<SealedBlock> ready) {
        static final Poll NONE = new Poll(false, null);
        static final Poll LOADING = new Poll(true, null);
    }

    public PrefetchTable(
            TierChain chain, ReclaimingAllocator memory, BlockCache cache, EngineMetrics metrics, NanoClock clock) {
        this(chain, memory, cache, metrics, clock, Integer.MAX_VALUE);
    }

    /** @param maxPerInstance tasks one instance may have running ({@code pega.limits.prefetches-per-instance}) */
    public PrefetchTable(
            TierChain chain,
            ReclaimingAllocator memory,
            BlockCache cache,
            EngineMetrics metrics,
            NanoClock clock,
            int maxPerInstance) {
        this(chain, memory, cache, metrics, clock, maxPerInstance, keys -> {});
    }

    /**
     * @param inserted told the keys of fetched blocks the RAM index accepted (one namespace per call), so the cluster
     *     index learns this node holds them now; it must only enqueue and return
     */
    public PrefetchTable(
            TierChain chain,
            ReclaimingAllocator memory,
            BlockCache cache,
            EngineMetrics metrics,
            NanoClock clock,
            int maxPerInstance,
            Consumer<List<BlockKey>> inserted) {
        this.inserted = inserted;
        this.maxPerInstance = maxPerInstance;
        this.chain = chain;
        this.memory = memory;
        this.cache = cache;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** Checks for a task of this (instance, req_id) and delivers it if it finished for exactly these keys. */
    public Poll poll(String instanceId, String reqId, List<BlockKey> keys) {
        return poll(instanceId, reqId, keys, false);
    }

    /**
     * Checks for a task of this (instance, req_id) and delivers it if it finished for exactly these keys, asked as
     * {@code whole} (all or nothing) or not.
     */
    public Poll poll(String instanceId, String reqId, List<BlockKey> keys, boolean whole) {
        Task task;
        TaskKey id = new TaskKey(instanceId, reqId);
        synchronized (this) {
            task = tasks.get(id);
            if (task == null) {
                return Poll.NONE;
            }
            if (!task.keys.equals(keys) || task.whole != whole) {
                tasks.remove(id);
                task.discard();
                return Poll.NONE;
            }
            if (!task.fetch.isDone()) {
                return Poll.LOADING;
            }
            tasks.remove(id);
        }
        return new Poll(false, deliver(task));
    }

    private List<SealedBlock> deliver(Task task) {
        TierChain.Fetched result = task.fetch.getNow(null);
        List<SealedBlock> fetched = result.blocks();
        List<BlockKey> fetchedKeys = task.keys.subList(task.prefix.size(), task.prefix.size() + fetched.size());
        TierAttribution.fetched(task.keys.size(), task.prefix.size(), chain.names(), result.perTier())
                .recordInto(metrics);
        List<SealedBlock> ready = new ArrayList<>(task.prefix);
        if (!fetched.isEmpty()) {
            // One reference goes to the cache, the fetched one to the lease.
            for (SealedBlock block : fetched) {
                block.retain();
            }
            InsertOutcome[] outcomes = new InsertOutcome[fetched.size()];
            cache.insertAll(fetchedKeys, fetched, outcomes);
            List<BlockKey> accepted = new ArrayList<>(outcomes.length);
            for (int i = 0; i < outcomes.length; i++) {
                if (outcomes[i] != InsertOutcome.INSERTED) {
                    fetched.get(i).release();
                } else {
                    metrics.increment(EngineCounter.CACHE_INSERTIONS);
                    accepted.add(fetchedKeys.get(i));
                }
            }
            if (!accepted.isEmpty()) {
                inserted.accept(accepted);
            }
            ready.addAll(fetched);
        }
        return ready;
    }

    /**
     * Starts a fetch of the keys after {@code prefix}; the task takes over the prefix references (unless it throws:
     * then they stay the caller's).
     *
     * @return false when there is no backing tier (the caller answers from RAM alone)
     * @throws EngineException RESOURCE_EXHAUSTED when the instance already runs its maximum of tasks (a task for the
     *     same req_id, which this one replaces, does not count)
     */
    public boolean start(String instanceId, String reqId, List<BlockKey> keys, List<SealedBlock> prefix) {
        return start(instanceId, reqId, keys, prefix, false);
    }

    /**
     * As {@link #start(String, String, List, List)}; with {@code whole} ({@code wait_for_full_prefix}) the tiers
     * supply every key after the prefix or none ({@link TierChain#fetchWhole}).
     */
    public boolean start(
            String instanceId, String reqId, List<BlockKey> keys, List<SealedBlock> prefix, boolean whole) {
        if (chain.isEmpty()) {
            return false;
        }
        requireRoom(instanceId, reqId);
        List<BlockKey> owned = List.copyOf(keys);
        List<BlockKey> rest = owned.subList(prefix.size(), owned.size());
        CompletableFuture<TierChain.Fetched> fetch =
                whole ? chain.fetchWhole(rest, memory) : chain.fetchPrefix(rest, memory);
        Task task = new Task(owned, whole, prefix, fetch, clock.nanoTime());
        Task previous;
        synchronized (this) {
            previous = tasks.put(new TaskKey(instanceId, reqId), task);
        }
        if (previous != null) {
            previous.discard();
        }
        return true;
    }

    /** Drops tasks older than {@code maxAgeNanos} (their results are released when they finish); returns how many. */
    public int collect(long maxAgeNanos) {
        List<Task> stale = new ArrayList<>();
        long now = clock.nanoTime();
        synchronized (this) {
            Iterator<Task> it = tasks.values().iterator();
            while (it.hasNext()) {
                Task task = it.next();
                if (now - task.startedNanos >= maxAgeNanos) {
                    it.remove();
                    stale.add(task);
                }
            }
        }
        stale.forEach(Task::discard);
        return stale.size();
    }

    /** Drops every task of one instance (its teardown). */
    public void dropInstance(String instanceId) {
        List<Task> dropped = new ArrayList<>();
        synchronized (this) {
            Iterator<Map.Entry<TaskKey, Task>> it = tasks.entrySet().iterator();
            while (it.hasNext()) {
                Map.Entry<TaskKey, Task> e = it.next();
                if (e.getKey().instanceId().equals(instanceId)) {
                    it.remove();
                    dropped.add(e.getValue());
                }
            }
        }
        dropped.forEach(Task::discard);
    }

    public synchronized int size() {
        return tasks.size();
    }

    private synchronized void requireRoom(String instanceId, String reqId) {
        int running = 0;
        for (TaskKey key : tasks.keySet()) {
            if (key.instanceId().equals(instanceId) && !key.reqId().equals(reqId)) {
                running++;
            }
        }
        if (running >= maxPerInstance) {
            throw EngineException.resourceExhausted("instance " + instanceId + " has " + running
                    + " prefetches running: pega.limits.prefetches-per-instance is " + maxPerInstance);
        }
    }

    public boolean hasTier() {
        return !chain.isEmpty();
    }
}
