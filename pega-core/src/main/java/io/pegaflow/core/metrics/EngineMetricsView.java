package io.pegaflow.core.metrics;

import java.util.Set;

/**
 * The engine's counters, read-only: what the server's meter binder and the admin API read (both through this view,
 * keyed by {@link EngineCounter}). Values are read at call time; none is a snapshot of the others.
 */
public interface EngineMetricsView {

    /** The current value of one counter. */
    long count(EngineCounter counter);

    /** Bytes of blocks still waiting for slots, i.e. saved but not yet sealed (a level, not a counter). */
    long inflightBytes();

    /** Requested blocks answered by {@code tier} so far: {@code ram}, a backing tier's name, or {@code miss}. */
    long tierRequests(String tier);

    /** The tiers counted so far (at least {@code ram}, {@code ssd}, {@code rdma}, {@code miss}), unordered. */
    Set<String> tierNames();
}
