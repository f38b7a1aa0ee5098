package io.pegaflow.node.remote;

import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongConsumer;

/**
 * What the remote tier did, for metrics and the {@code GET /transfer} view: fetch attempts and their outcomes, blocks
 * and bytes fetched, failures by {@link Failure}, fetches running now, and each successful fetch's duration. Thread-safe.
 */
public final class RemoteFetchStats {
    /** Why a fetch supplied fewer blocks than the metaserver promised (or none). */
    public enum Failure {
        /** The metaserver's prefix query failed. */
        METASERVER,
        /** The handshake RPC or the transfer engine's connect failed. */
        HANDSHAKE,
        /** QueryBlocksForTransfer failed. */
        QUERY,
        /** The owner locked fewer blocks than asked (evicted meanwhile, or a layout this node cannot rebuild). */
        SHORT,
        /** The pool had no room for the fetched blocks, even after reclaim. */
        ALLOCATION,
        /** A get failed or timed out; the connection is dropped and the next fetch handshakes again. */
        TRANSFER,
        /**
         * The owner's lock may have ended before the gets were seen complete (decision 0017): nothing of them is used,
         * since the owner may have reused the memory under them.
         */
        LOCK_EXPIRED,
        /** Too many fetches were queued; this one was not started. */
        REJECTED,
        /**
         * A block that arrived does not match the CRC32C its owner computed (decision 0031 §3): it and the blocks after
         * it are a miss.
         */
        CHECKSUM
    }

    final LongAdder attempts = new LongAdder();
    final LongAdder succeeded = new LongAdder();
    final LongAdder blocks = new LongAdder();
    final LongAdder bytes = new LongAdder();
    final AtomicLong running = new AtomicLong();
    private final Map<Failure, LongAdder> failures = new EnumMap<>(Failure.class);
    private volatile LongConsumer durations = nanos -> {};

    RemoteFetchStats() {
        for (Failure f : Failure.values()) {
            failures.put(f, new LongAdder());
        }
    }

    private LongAdder counter(Failure why) {
        return Objects.requireNonNull(failures.get(why), "every failure kind has a counter from construction");
    }

    void failed(Failure why) {
        counter(why).increment();
    }

    void recordDuration(long nanos) {
        durations.accept(nanos);
    }

    /** Where successful fetch durations go (a timer of the metric catalog); none until bound. */
    public void bindDurations(LongConsumer sink) {
        durations = sink;
    }

    /** Fetches that asked an owner for at least one block. */
    public long attempts() {
        return attempts.sum();
    }

    /** Fetches that supplied every block the owner was asked for. */
    public long succeeded() {
        return succeeded.sum();
    }

    public long blocksFetched() {
        return blocks.sum();
    }

    public long bytesFetched() {
        return bytes.sum();
    }

    public long running() {
        return running.get();
    }

    public long failures(Failure why) {
        return counter(why).sum();
    }

    /** Failures by kind, for the view. */
    public Map<String, Long> failures() {
        Map<String, Long> out = new java.util.LinkedHashMap<>();
        failures.forEach((k, v) -> out.put(k.name(), v.sum()));
        return out;
    }
}
