package io.pegaflow.core.tier;

import io.pegaflow.core.metrics.EngineMetrics;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where the blocks of one query decision came from: {@code ram} hits, blocks each backing tier supplied (keyed by
 * {@link BackingTier#tierName()}), and the {@code miss}es, over the {@code requested} blocks. Built once per decision
 * (a RAM-only answer, or the delivery of a tier fetch), checked here, and recorded once
 * ({@code pegaflow_cache_tier_block_requests_total}).
 *
 * <p>Invariant, checked on construction: every count is at least 0 and {@code ram + Σ byTier + miss == requested}
 * (pegaflow's {@code tier_attribution.rs} keeps the same one).
 *
 * @param requested blocks the query asked for
 * @param ram blocks found resident in RAM
 * @param byTier blocks supplied by each backing tier, in chain order (unmodifiable)
 * @param miss blocks nobody supplied
 */
public record TierAttribution(int requested, int ram, Map<String, Integer> byTier, int miss) {
    /** The label of RAM hits. */
    public static final String RAM = "ram";
    /** The label of misses. */
    public static final String MISS = "miss";

    public TierAttribution {
        byTier = byTier.isEmpty() ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(byTier));
        long sum = (long) ram + miss;
        if (ram < 0 || miss < 0) {
            throw new IllegalArgumentException("tier attribution: ram " + ram + ", miss " + miss + " (expected: >= 0)");
        }
        for (Map.Entry<String, Integer> e : byTier.entrySet()) {
            if (e.getValue() < 0) {
                throw new IllegalArgumentException(
                        "tier attribution: " + e.getKey() + " " + e.getValue() + " (expected: >= 0)");
            }
            sum += e.getValue();
        }
        if (sum != requested) {
            throw new IllegalArgumentException("tier attribution: ram " + ram + " + tiers " + byTier + " + miss " + miss
                    + " = " + sum + " (expected: the " + requested + " blocks requested)");
        }
    }

    /** A decision answered from RAM alone: {@code hits} resident, the rest missed. */
    public static TierAttribution ramOnly(int requested, int hits) {
        return new TierAttribution(requested, hits, Map.of(), requested - hits);
    }

    /**
     * The delivery of a chain fetch: {@code ram} resident blocks before it, {@code perTier[i]} blocks from tier
     * {@code names.get(i)}, the rest missed.
     */
    public static TierAttribution fetched(int requested, int ram, List<String> names, int[] perTier) {
        Map<String, Integer> byTier = new LinkedHashMap<>();
        int fetched = 0;
        for (int i = 0; i < perTier.length; i++) {
            byTier.put(names.get(i), perTier[i]);
            fetched += perTier[i];
        }
        return new TierAttribution(requested, ram, byTier, requested - ram - fetched);
    }

    /** Adds this decision to the engine's per-tier request counters. */
    public void recordInto(EngineMetrics metrics) {
        metrics.countTierRequests(RAM, ram);
        for (Map.Entry<String, Integer> e : byTier.entrySet()) {
            metrics.countTierRequests(e.getKey(), e.getValue());
        }
        metrics.countTierRequests(MISS, miss);
    }

    /** Blocks a tier supplied (0 for a tier not in this decision). */
    public int fromTier(String tierName) {
        return byTier.getOrDefault(tierName, 0);
    }
}
