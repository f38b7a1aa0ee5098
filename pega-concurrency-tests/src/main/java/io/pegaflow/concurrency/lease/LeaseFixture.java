package io.pegaflow.concurrency.lease;

import io.pegaflow.concurrency.WitnessedBlock;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.lease.LeaseId;
import io.pegaflow.core.lease.LeaseTable;

/**
 * A lease table on a hand-driven clock holding one lease over one block. The block starts with two references: one
 * stands for the RAM cache's and stays with the test, the other is the lease's. So after the race the block's count is
 * 1 plus the references consumers took, and any missing or extra release shows in it.
 */
final class LeaseFixture {
    static final String INSTANCE = "instance-0";
    static final long TTL_NANOS = 1_000;
    static final long START_NANOS = 1_000_000;
    private static final String UNKNOWN_OR_EXPIRED = "storage error: query lease is unknown or expired";

    private volatile long nowNanos = START_NANOS;
    private final WitnessedBlock witnessed = new WitnessedBlock();
    private final LeaseTable table = new LeaseTable(() -> nowNanos, TTL_NANOS);
    private final LeaseId id;

    LeaseFixture(int consumers) {
        witnessed.block().retain();
        id = table.create(INSTANCE, new SealedBlock[] {witnessed.block()}, consumers);
    }

    LeaseTable table() {
        return table;
    }

    LeaseId id() {
        return id;
    }

    /** Moves the clock to the lease's expiry instant, where the table must treat it as gone. */
    void expire() {
        nowNanos = START_NANOS + TTL_NANOS;
    }

    /**
     * One load's consume: 1 when it got this lease's block (and now holds a reference the fixture drops later), 0 when
     * the table answered "unknown or expired", 2 when it returned anything else.
     *
     * @throws EngineException any other refusal, which the test does not expect
     */
    int consume() {
        try {
            SealedBlock[] blocks = table.consume(INSTANCE, id);
            return blocks.length == 1 && blocks[0] == witnessed.block() ? 1 : 2;
        } catch (EngineException e) {
            if (UNKNOWN_OR_EXPIRED.equals(e.getMessage())) {
                return 0;
            }
            throw e;
        }
    }

    /** The block's count now: the cache's reference plus one per consumer holding it, if every release was right. */
    int blockRefs() {
        return witnessed.block().refCount();
    }

    /** How often the block freed its memory (0 while the cache's reference exists). */
    int frees() {
        return witnessed.frees();
    }

    /** Ends what is left of the lease and drops every reference, so the unit returns to the shared pool. */
    void dispose() {
        table.clear();
        witnessed.dispose();
    }
}
