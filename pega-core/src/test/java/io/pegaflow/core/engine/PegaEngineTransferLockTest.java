package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.KIB;
import static io.pegaflow.core.engine.EngineHarness.MIB;
import static io.pegaflow.core.engine.EngineHarness.NAMESPACE;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static io.pegaflow.core.engine.EngineHarness.ids;
import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.engine.EngineHarness.Worker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Transfer locks through the engine: found blocks are described and held, misses skipped, and a lock nobody releases
 * expires on the maintenance pass so its blocks become evictable.
 */
@Timeout(60)
class PegaEngineTransferLockTest {
    private static final int BLOCKS = 4;
    private static final int BLOCK_BYTES = (int) (4 * KIB);
    private static final long[] CONTENT = {21, 22, 23, 24};
    private static final Duration LOCK_TIMEOUT = Duration.ofMinutes(2);

    private final EngineHarness harness = new EngineHarness(16 * MIB);
    private final PegaEngine engine = harness.engine;

    @AfterEach
    void tearDown() {
        harness.close();
    }

    private Worker saved(String instance, int salt) {
        Worker w = harness.worker(instance, BLOCKS, BLOCK_BYTES);
        w.register();
        w.fill(ids(0, BLOCKS), CONTENT);
        w.save(ids(0, BLOCKS), hashes(salt, BLOCKS));
        engine.flushSeals();
        return w;
    }

    @Test
    void shouldDescribeFoundBlocksInRequestOrderSkippingMisses() {
        saved("describe", 1);
        List<byte[]> asked = new ArrayList<>(hashes(1, BLOCKS));
        asked.add(1, hashes(99, 1).get(0)); // a miss in the middle

        TransferGrant grant = engine.lockForTransfer(NAMESPACE, asked, "10.0.0.2:50055");

        assertThat(grant.sessionId()).hasSize(36);
        assertThat(grant.lockTimeoutSeconds()).isEqualTo(120);
        assertThat(grant.blocks()).hasSize(BLOCKS);
        for (int i = 0; i < BLOCKS; i++) {
            TransferGrant.Block b = grant.blocks().get(i);
            assertThat(b.hash()).isEqualTo(hashes(1, BLOCKS).get(i));
            assertThat(b.slots()).hasSize(1);
            assertThat(b.slots().get(0).kAddress()).isNotZero();
            assertThat(b.slots().get(0).kBytes()).isGreaterThanOrEqualTo(BLOCK_BYTES);
        }
        assertThat(engine.transferLockStats().lockedBlocks()).isEqualTo(BLOCKS);
        assertThat(engine.releaseTransferLock(grant.sessionId())).isEqualTo(BLOCKS);
        assertThat(engine.releaseTransferLock(grant.sessionId())).isZero();
    }

    @Test
    void shouldOpenASessionWhenNothingIsFound() {
        TransferGrant grant = engine.lockForTransfer(NAMESPACE, hashes(5, 2), "r");

        assertThat(grant.blocks()).isEmpty();
        assertThat(engine.transferLockStats().sessions()).isEqualTo(1);
        assertThat(engine.releaseTransferLock(grant.sessionId())).isZero();
    }

    @Test
    void shouldBreakLocksOnTheOperatorsCleanupAndFreeTheirMemory() {
        saved("expiry", 2);
        TransferGrant grant = engine.lockForTransfer(NAMESPACE, hashes(2, BLOCKS), "dead-peer:1");

        MemoryCleanupResult cleanup = engine.cleanupMemory();
        assertThat(cleanup.brokenTransferLocks()).isEqualTo(1);
        assertThat(cleanup.stillReferencedBlocks())
                .as("nothing held once the lock is broken")
                .isZero();
        assertThat(engine.pool().outstandingAllocations()).isZero();
        assertThat(engine.transferLockStats().sessions()).isZero();
        assertThat(engine.transferLockStats().broken()).isEqualTo(1);
        assertThat(engine.releaseTransferLock(grant.sessionId()))
                .as("a release after the break")
                .isZero();
    }

    @Test
    void shouldMakeBlocksEvictableOnceAnUnreleasedLockExpires() {
        saved("evictable", 3);
        engine.lockForTransfer(NAMESPACE, hashes(3, BLOCKS), "dead-peer:1");
        assertThat(engine.blockCache().evictColdest(BLOCKS).count())
                .as("locked blocks are skipped")
                .isZero();

        harness.advance(LOCK_TIMEOUT);
        engine.runMaintenance();

        var evicted = engine.blockCache().evictColdest(BLOCKS);
        assertThat(evicted.count()).isEqualTo(BLOCKS);
        evicted.releaseAll();
        assertThat(engine.pool().outstandingAllocations()).isZero();
    }
}
