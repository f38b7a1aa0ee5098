package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.KIB;
import static io.pegaflow.core.engine.EngineHarness.MIB;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static io.pegaflow.core.engine.EngineHarness.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.engine.EngineHarness.LoadOutcome;
import io.pegaflow.core.engine.EngineHarness.Worker;
import io.pegaflow.core.error.EngineException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Query leases through the engine API with an injected clock. */
@Timeout(60)
class PegaEngineLeaseTest {
    private static final int BLOCKS = 4;
    private static final int BLOCK_BYTES = (int) (4 * KIB);
    private static final long[] CONTENT = {11, 12, 13, 14};
    private static final Duration TTL = Duration.ofMinutes(10);

    private final EngineHarness harness = new EngineHarness(16 * MIB);
    private final PegaEngine engine = harness.engine;

    @AfterEach
    void tearDown() {
        harness.close();
    }

    /** Registers, fills, saves 4 blocks of salt {@code salt}, flushes, and returns the lease of a full hit. */
    private byte[] savedAndLeased(Worker w, int salt) {
        w.fill(ids(0, BLOCKS), CONTENT);
        w.save(ids(0, BLOCKS), hashes(salt, BLOCKS));
        engine.flushSeals();
        QueryOutcome hit = w.query(hashes(salt, BLOCKS), "req-" + salt);
        assertThat(hit.hitBlocks()).isEqualTo(BLOCKS);
        assertThat(hit.lease()).hasSize(16);
        return hit.lease();
    }

    private static void assertUnknownLease(LoadOutcome outcome) {
        assertThat(outcome.error()).isNotNull();
        assertThat(outcome.error().kind()).isEqualTo(EngineException.Kind.INTERNAL);
        assertThat(outcome.error().getMessage()).isEqualTo("storage error: query lease is unknown or expired");
        assertThat(outcome.state()).isEqualTo(-1);
    }

    @Test
    void shouldExpireLeaseOnceClockPassesTtl() {
        Worker w = harness.worker("expiry", BLOCKS, BLOCK_BYTES);
        w.register();
        byte[] lease = savedAndLeased(w, 1);

        harness.advance(TTL.plusSeconds(1));
        engine.runMaintenance();

        assertThat(engine.activeLeases()).isZero();
        assertUnknownLease(w.load(lease, ids(0, BLOCKS)));
    }

    @Test
    void shouldKeepLeaseUsableJustBeforeTtl() {
        Worker w = harness.worker("almost", BLOCKS, BLOCK_BYTES);
        w.register();
        byte[] lease = savedAndLeased(w, 2);

        harness.advance(TTL.minusSeconds(1));
        engine.runMaintenance();
        w.zero();

        assertThat(engine.activeLeases()).isEqualTo(1);
        assertThat(w.load(lease, ids(0, BLOCKS)).succeeded()).isTrue();
        w.verify(ids(0, BLOCKS), CONTENT);
    }

    @Test
    void shouldSweepExpiredLeaseOnReleaseWithoutTimer() {
        Worker w = harness.worker("lazy", BLOCKS, BLOCK_BYTES);
        w.register();
        byte[] lease = savedAndLeased(w, 3);

        harness.advance(TTL);

        assertThatThrownBy(() -> engine.release(lease)).isInstanceOfSatisfying(EngineException.class, e -> {
            assertThat(e.kind()).isEqualTo(EngineException.Kind.FAILED_PRECONDITION);
            assertThat(e.getMessage()).isEqualTo("query lease is unknown or expired");
        });
        assertThat(engine.activeLeases()).isZero();
    }

    @Test
    void shouldSweepExpiredLeaseWhenNextLeaseIsCreated() {
        Worker w = harness.worker("sweep-on-create", BLOCKS, BLOCK_BYTES);
        w.register();
        savedAndLeased(w, 4);
        harness.advance(TTL.plusSeconds(30));

        QueryOutcome next = w.query(hashes(4, BLOCKS), "second");

        assertThat(next.hitBlocks()).isEqualTo(BLOCKS);
        assertThat(engine.activeLeases()).as("only the new lease").isEqualTo(1);
        engine.release(next.lease());
    }

    @Test
    void shouldFreePinnedMemoryWhenOnlyAnExpiredLeaseHeldIt() {
        Worker w = harness.worker("holder", BLOCKS, BLOCK_BYTES);
        w.register();
        savedAndLeased(w, 5);

        MemoryCleanupResult cleanup = engine.cleanupMemory();

        assertThat(cleanup.evictedBlocks()).isEqualTo(BLOCKS);
        assertThat(cleanup.stillReferencedBlocks()).isEqualTo(BLOCKS);
        assertThat(cleanup.reclaimedBytes()).isZero();
        assertThat(engine.pool().outstandingAllocations())
                .as("held by the lease")
                .isPositive();

        harness.advance(TTL.plusSeconds(1));
        engine.runMaintenance();

        assertThat(engine.activeLeases()).isZero();
        assertThat(engine.pool().outstandingAllocations()).isZero();
        assertThat(engine.pool().usedBytes()).isZero();
    }

    @Test
    void shouldNotRefreshTtlWhenLeaseIsPartlyConsumed() {
        Worker w = harness.worker("world2", "core-ns", 2, 0, BLOCKS, BLOCK_BYTES);
        w.register();
        byte[] lease = savedAndLeased(w, 6);

        Duration halfTtl = TTL.dividedBy(2);
        harness.advance(halfTtl);
        assertThat(w.load(lease, ids(0, BLOCKS)).succeeded()).isTrue();
        harness.advance(halfTtl.plusSeconds(1));

        assertUnknownLease(w.load(lease, ids(0, BLOCKS)));
    }

    @Test
    void shouldAllowExactlyWorldSizeLoadsPerLease() {
        Worker w = harness.worker("world-two", "core-ns", 2, 0, BLOCKS, BLOCK_BYTES);
        w.register();
        byte[] lease = savedAndLeased(w, 7);

        w.zero();
        assertThat(w.load(lease, ids(0, BLOCKS)).succeeded()).isTrue();
        w.verify(ids(0, BLOCKS), CONTENT);
        w.zero();
        assertThat(w.load(lease, ids(0, BLOCKS)).succeeded()).isTrue();
        w.verify(ids(0, BLOCKS), CONTENT);

        assertUnknownLease(w.load(lease, ids(0, BLOCKS)));
        assertThat(engine.activeLeases()).isZero();
    }

    @Test
    void shouldRejectLoadOfReleasedLease() {
        Worker w = harness.worker("released", BLOCKS, BLOCK_BYTES);
        w.register();
        byte[] lease = savedAndLeased(w, 8);

        engine.release(lease);

        assertUnknownLease(w.load(lease, ids(0, BLOCKS)));
    }

    @Test
    void shouldReleaseLeaseWhateverItsRemainingShares() {
        Worker w = harness.worker("release-shared", "core-ns", 4, 0, BLOCKS, BLOCK_BYTES);
        w.register();
        byte[] lease = savedAndLeased(w, 9);
        assertThat(w.load(lease, ids(0, BLOCKS)).succeeded()).isTrue();

        engine.release(lease);

        assertThat(engine.activeLeases()).isZero();
        assertUnknownLease(w.load(lease, ids(0, BLOCKS)));
    }

    @Test
    void shouldNotConsumeLeaseLoadedByAnotherInstance() {
        Worker owner = harness.worker("owner", BLOCKS, BLOCK_BYTES);
        Worker thief = harness.worker("thief", BLOCKS, BLOCK_BYTES);
        owner.register();
        thief.register();
        byte[] lease = savedAndLeased(owner, 10);

        LoadOutcome stolen = thief.load(lease, ids(0, BLOCKS));

        assertThat(stolen.error().getMessage())
                .isEqualTo("storage error: query lease belongs to instance owner, got thief");
        assertThat(stolen.state()).isEqualTo(-1);
        thief.verifyZeroed();
        assertThat(owner.load(lease, ids(0, BLOCKS)).succeeded()).isTrue();
    }

    @Test
    void shouldDropLeasesOnUnregisterAndFreeTheirBlocks() {
        Worker w = harness.worker("teardown", BLOCKS, BLOCK_BYTES);
        w.register();
        byte[] lease = savedAndLeased(w, 11);
        engine.cleanupMemory();
        assertThat(engine.pool().outstandingAllocations()).isPositive();

        engine.unregister("teardown");

        assertThat(engine.activeLeases()).isZero();
        assertThat(engine.pool().outstandingAllocations()).isZero();
        assertThatThrownBy(() -> engine.release(lease)).hasMessage("query lease is unknown or expired");
    }

    @Test
    void shouldFailSaveAndSecondUnregisterAfterUnregister() {
        Worker w = harness.worker("gone", BLOCKS, BLOCK_BYTES);
        w.register();
        engine.unregister("gone");

        assertThatThrownBy(() -> w.save(ids(0, BLOCKS), hashes(12, BLOCKS)))
                .isInstanceOfSatisfying(EngineException.class, e -> {
                    assertThat(e.kind()).isEqualTo(EngineException.Kind.FAILED_PRECONDITION);
                    assertThat(e.getMessage()).isEqualTo("instance gone not found");
                });
        assertThatThrownBy(() -> engine.unregister("gone")).isInstanceOfSatisfying(EngineException.class, e -> {
            assertThat(e.kind()).isEqualTo(EngineException.Kind.FAILED_PRECONDITION);
            assertThat(e.getMessage()).isEqualTo("instance gone not found");
        });
        assertThat(harness.backend.mappedObjects()).isZero();
    }

    @Test
    void shouldKeepCachedBlocksAfterUnregisterForTheNextInstanceOfTheNamespace() {
        Worker first = harness.worker("first-life", BLOCKS, BLOCK_BYTES);
        first.register();
        engine.release(savedAndLeased(first, 13));
        engine.unregister("first-life");

        Worker second = harness.worker("second-life", BLOCKS, BLOCK_BYTES);
        second.register();
        QueryOutcome hit = second.query(hashes(13, BLOCKS), "again");

        assertThat(hit.hitBlocks()).isEqualTo(BLOCKS);
        assertThat(second.load(hit.lease(), ids(0, BLOCKS)).succeeded()).isTrue();
        second.verify(ids(0, BLOCKS), CONTENT);
        assertThat(engine.instanceIds()).containsExactly("second-life");
    }
}
