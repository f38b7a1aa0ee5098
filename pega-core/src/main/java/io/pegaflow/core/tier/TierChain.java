package io.pegaflow.core.tier;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.kernel.agent.NanoClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The backing tiers below RAM, in the order they are asked (SSD, then a remote node): a fetch asks the first tier for
 * the RAM-miss suffix, the next tier for whatever the first could not supply, and so on, and the result is the
 * contiguous prefix they supplied together, with how many blocks each tier contributed (for
 * {@link TierAttribution}).
 *
 * <p>Ownership: the chain owns its tiers; {@link #close()} closes them in reverse order. Immutable and thread-safe.
 */
public final class TierChain implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TierChain.class);

    /** How long an all-or-nothing fetch waits for peers to hold the rest (upstream's {@code REMOTE_WAIT_TIMEOUT}). */
    public static final Duration FULL_PREFIX_WAIT = Duration.ofSeconds(30);
    /**
     * Between two asks of the peers while waiting: each ask is a metaserver query, so this bounds one waiting query to
     * 20 of them a second (upstream polls every 10 ms).
     */
    public static final Duration FULL_PREFIX_POLL = Duration.ofMillis(50);
    /** The wait runs on real time: its pauses are the common pool's delayed executor, which no test clock drives. */
    private static final NanoClock CLOCK = NanoClock.SYSTEM;

    private static final TierChain EMPTY = new TierChain(List.of(), FULL_PREFIX_WAIT, FULL_PREFIX_POLL);

    private final List<BackingTier> tiers;
    private final List<String> names;
    private final int[] all;
    private final int[] peers;
    private final long fullPrefixWaitNanos;
    private final long fullPrefixPollNanos;

    private TierChain(List<BackingTier> tiers, Duration fullPrefixWait, Duration fullPrefixPoll) {
        this.tiers = List.copyOf(tiers);
        this.all = IntStream.range(0, tiers.size()).toArray();
        this.peers = IntStream.range(0, tiers.size())
                .filter(i -> tiers.get(i).waitsForPeers())
                .toArray();
        this.fullPrefixWaitNanos = fullPrefixWait.toNanos();
        this.fullPrefixPollNanos = fullPrefixPoll.toNanos();
        List<String> n = new ArrayList<>(tiers.size());
        for (BackingTier t : tiers) {
            n.add(t.tierName());
        }
        this.names = List.copyOf(n);
    }

    /** No tier: queries answer from RAM alone. */
    public static TierChain empty() {
        return EMPTY;
    }

    /**
     * The tiers in fetch order.
     *
     * @throws IllegalArgumentException when a name is empty, {@code ram} or {@code miss} (the attribution's own
     *     labels), or used twice, or a tier appears twice
     */
    public static TierChain of(List<BackingTier> tiers) {
        return of(tiers, FULL_PREFIX_WAIT, FULL_PREFIX_POLL);
    }

    /**
     * The tiers in fetch order, waiting {@code fullPrefixWait} for peers in an all-or-nothing fetch, asking them every
     * {@code fullPrefixPoll}.
     *
     * @throws IllegalArgumentException as {@link #of(List)}
     */
    public static TierChain of(List<BackingTier> tiers, Duration fullPrefixWait, Duration fullPrefixPoll) {
        Set<String> seen = new HashSet<>();
        Set<BackingTier> instances = Collections.newSetFromMap(new IdentityHashMap<>());
        for (BackingTier t : tiers) {
            String name = t.tierName();
            if (name == null
                    || name.isEmpty()
                    || name.equals(TierAttribution.RAM)
                    || name.equals(TierAttribution.MISS)) {
                throw new IllegalArgumentException(
                        "tier name: '" + name + "' (expected: a non-empty label other than ram and miss)");
            }
            if (!instances.add(t)) {
                throw new IllegalArgumentException("tier " + name + " is in the chain twice");
            }
            if (!seen.add(name)) {
                throw new IllegalArgumentException("tier name " + name + " is used by two tiers (expected: unique)");
            }
        }
        return tiers.isEmpty() ? EMPTY : new TierChain(tiers, fullPrefixWait, fullPrefixPoll);
    }

    public boolean isEmpty() {
        return tiers.isEmpty();
    }

    /** The tiers' names in fetch order. */
    public List<String> names() {
        return names;
    }

    /** The strictest host alignment any tier needs (1 without tiers). */
    public long requiredHostAlignmentBytes() {
        long alignment = 1;
        for (BackingTier t : tiers) {
            alignment = Math.max(alignment, t.requiredHostAlignmentBytes());
        }
        return alignment;
    }

    /** What a chain fetch produced: the blocks in key order, and how many of them each tier supplied. */
    public record Fetched(List<SealedBlock> blocks, int[] perTier) {
        static final Fetched NOTHING = new Fetched(List.of(), new int[0]);
    }

    /**
     * Fetches the longest prefix of {@code keys} the tiers can supply between them, each tier starting where the
     * previous one stopped. Never throws and never completes exceptionally: a tier that breaks its contract counts as
     * supplying nothing. Every returned block carries one reference that passes to the caller.
     */
    public CompletableFuture<Fetched> fetchPrefix(List<BlockKey> keys, ReclaimingAllocator memory) {
        if (tiers.isEmpty() || keys.isEmpty()) {
            return CompletableFuture.completedFuture(Fetched.NOTHING);
        }
        return fetchFrom(all, 0, keys, memory, new ArrayList<>(keys.size()), new int[tiers.size()]);
    }

    /**
     * All of {@code keys} or nothing ({@code wait_for_full_prefix}, upstream #411): the tiers are asked as by {@link
     * #fetchPrefix}; while they fall short, tiers that fetch from peers ({@link BackingTier#waitsForPeers}) are asked
     * again for the rest, for at most {@link #FULL_PREFIX_WAIT}, since a peer may still be saving the prefix (a
     * prefill node, for a decode node that waits). A partial result is released, never returned: the caller must
     * not go on with part of a prefix it asked to have whole. Never completes exceptionally.
     */
    public CompletableFuture<Fetched> fetchWhole(List<BlockKey> keys, ReclaimingAllocator memory) {
        if (tiers.isEmpty() || keys.isEmpty()) {
            return CompletableFuture.completedFuture(Fetched.NOTHING);
        }
        long deadline = CLOCK.nanoTime() + fullPrefixWaitNanos;
        return fetchFrom(all, 0, keys, memory, new ArrayList<>(keys.size()), new int[tiers.size()])
                .thenCompose(f -> awaitPeers(f, keys, memory, deadline))
                .thenApply(f -> {
                    if (f.blocks().size() == keys.size()) {
                        return f;
                    }
                    f.blocks().forEach(SealedBlock::release);
                    return new Fetched(List.of(), new int[tiers.size()]);
                });
    }

    private CompletableFuture<Fetched> awaitPeers(
            Fetched f, List<BlockKey> keys, ReclaimingAllocator memory, long deadline) {
        if (f.blocks().size() == keys.size() || peers.length == 0 || CLOCK.nanoTime() - deadline >= 0) {
            return CompletableFuture.completedFuture(f);
        }
        Executor later = CompletableFuture.delayedExecutor(fullPrefixPollNanos, TimeUnit.NANOSECONDS);
        return CompletableFuture.runAsync(() -> {}, later)
                .thenCompose(ignored -> fetchFrom(peers, 0, keys, memory, f.blocks(), f.perTier()))
                .thenCompose(next -> awaitPeers(next, keys, memory, deadline));
    }

    /** Asks {@code order[at..]} in turn for the keys after {@code got}, adding what each supplies. */
    private CompletableFuture<Fetched> fetchFrom(
            int[] order,
            int at,
            List<BlockKey> keys,
            ReclaimingAllocator memory,
            List<SealedBlock> got,
            int[] perTier) {
        if (at == order.length || got.size() == keys.size()) {
            return CompletableFuture.completedFuture(new Fetched(got, perTier));
        }
        int tier = order[at];
        return fetchOne(tiers.get(tier), keys.subList(got.size(), keys.size()), memory)
                .thenCompose(blocks -> {
                    got.addAll(blocks);
                    perTier[tier] += blocks.size();
                    return fetchFrom(order, at + 1, keys, memory, got, perTier);
                });
    }

    private static CompletableFuture<List<SealedBlock>> fetchOne(
            BackingTier tier, List<BlockKey> keys, ReclaimingAllocator memory) {
        CompletableFuture<List<SealedBlock>> started;
        try {
            started = tier.fetchPrefix(keys, memory);
        } catch (RuntimeException e) {
            LOG.error("tier {} failed to start a fetch", tier.tierName(), e);
            return CompletableFuture.completedFuture(List.of());
        }
        return started.exceptionally(e -> {
            LOG.error("tier {} completed a fetch exceptionally (it must answer empty instead)", tier.tierName(), e);
            return List.of();
        });
    }

    /** Closes every tier, last first; a failure is logged and does not stop the others. */
    @Override
    public void close() {
        for (int i = tiers.size() - 1; i >= 0; i--) {
            BackingTier t = tiers.get(i);
            try {
                t.close();
            } catch (RuntimeException e) {
                LOG.error("closing tier {} failed", t.tierName(), e);
            }
        }
    }
}
