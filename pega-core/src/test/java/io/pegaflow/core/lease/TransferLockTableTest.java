package io.pegaflow.core.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Transfer-lock sessions on real ref-counted pool blocks and an adjustable clock: every way a session ends gives its
 * references back exactly once, and no way of using the table leaves a session or a reference behind (the reference's
 * leak of PR #399).
 */
@Timeout(30)
class TransferLockTableTest {
    private static final long TIMEOUT = 120_000_000_000L;

    private final PinnedMemoryPool pool = PinnedMemoryPool.create(PoolConfig.of(1 << 20));
    private final AtomicLong now = new AtomicLong(7_000_000_000L);
    private final TransferLockTable table = new TransferLockTable(now::get, TIMEOUT);
    private final List<SealedBlock> cacheRefs = new ArrayList<>();

    @AfterEach
    void tearDown() {
        table.clear();
        for (SealedBlock b : cacheRefs) {
            assertThat(b.refCount()).as("only the cache's reference is left").isEqualTo(1);
            b.release();
        }
        assertThat(pool.outstandingAllocations()).as("allocations leaked").isZero();
        pool.close();
    }

    private SealedBlock block() {
        PinnedAllocation allocation = pool.allocate(4096);
        SlotData slot = SlotData.contiguous(allocation, allocation.address(), 4096);
        allocation.release();
        SealedBlock block = new SealedBlock(new SlotData[] {slot});
        cacheRefs.add(block);
        return block;
    }

    /** Blocks retained for a lock, as QueryBlocksForTransfer hands them over. */
    private static SealedBlock[] retained(SealedBlock... blocks) {
        for (SealedBlock b : blocks) {
            b.retain();
        }
        return blocks;
    }

    @Test
    void shouldRefuseALockPastTheRequesterOrTheTotalBoundAndKeepNothing() {
        TransferLockTable bounded = new TransferLockTable(now::get, TIMEOUT, 2 * 4096, 3 * 4096);
        SealedBlock a = block();
        SealedBlock b = block();
        SealedBlock c = block();

        assertThatThrownBy(() -> bounded.lock("r1:1", retained(a, b, c)))
                .isInstanceOfSatisfying(
                        TransferLockTable.OverBound.class,
                        e -> assertThat(e.perRequester()).isTrue());
        assertThat(a.refCount()).as("a refused lock keeps no reference").isEqualTo(1);
        String first = bounded.lock("r1:1", retained(a, b));
        assertThatThrownBy(() -> bounded.lock("r1:1", retained(c))).isInstanceOf(TransferLockTable.OverBound.class);
        String second = bounded.lock("r2:1", retained(c));
        assertThatThrownBy(() -> bounded.lock("r3:1", retained(a)))
                .isInstanceOfSatisfying(
                        TransferLockTable.OverBound.class,
                        e -> assertThat(e.perRequester()).isFalse());
        assertThat(bounded.stats().lockedBytes()).isEqualTo(3 * 4096);
        assertThat(bounded.stats().refused()).isEqualTo(3);

        // a release gives the requester's share back
        assertThat(bounded.release(first)).isEqualTo(2);
        bounded.lock("r1:1", retained(a));
        assertThat(bounded.breakAll()).isEqualTo(2);
        assertThat(bounded.stats().broken()).isEqualTo(2);
        assertThat(bounded.stats().lockedBytes()).isZero();
        assertThat(bounded.release(second)).isZero();
        assertThat(c.refCount()).isEqualTo(1);
    }

    @Test
    void shouldHoldReferencesUntilReleased() {
        SealedBlock a = block();
        SealedBlock b = block();

        String id = table.lock("10.0.0.2:50055", retained(a, b));

        assertThat(a.refCount()).isEqualTo(2);
        assertThat(table.stats().lockedBlocks()).isEqualTo(2);
        assertThat(table.release(id)).isEqualTo(2);
        assertThat(a.refCount()).isEqualTo(1);
        assertThat(b.refCount()).isEqualTo(1);
        assertThat(table.size()).isZero();
        assertThat(table.stats().lockedBlocks()).isZero();
    }

    @Test
    void shouldIssueVersion4UuidStrings() {
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < 100; i++) {
            String id = table.lock("r", new SealedBlock[0]);
            assertThat(UUID.fromString(id).version()).isEqualTo(4);
            assertThat(UUID.fromString(id).toString()).isEqualTo(id);
            ids.add(id);
        }
        assertThat(ids).hasSize(100);
    }

    @Test
    void shouldOpenASessionEvenWithoutBlocks() {
        String id = table.lock("r", new SealedBlock[0]);

        assertThat(table.size()).isEqualTo(1);
        assertThat(table.release(id)).isZero();
        assertThat(table.size()).isZero();
    }

    @Test
    void shouldReleaseOnlyOnceWhenReleasedTwice() {
        SealedBlock a = block();
        String id = table.lock("r", retained(a));

        assertThat(table.release(id)).isEqualTo(1);
        assertThat(table.release(id)).as("second release").isZero();
        assertThat(a.refCount()).isEqualTo(1);
        assertThat(table.stats().released()).isEqualTo(1);
    }

    @Test
    void shouldAnswerZeroForAnUnknownSession() {
        assertThat(table.release("not-a-session")).isZero();
        assertThat(table.release("")).isZero();
    }

    @Test
    void shouldExpireStrictlyAfterTheTimeoutOnTheInjectedClock() {
        SealedBlock a = block();
        table.lock("r", retained(a));

        now.addAndGet(TIMEOUT - 1);
        assertThat(table.sweep()).as("one nanosecond before the deadline").isZero();
        assertThat(a.refCount()).isEqualTo(2);

        now.addAndGet(1);
        assertThat(table.sweep()).isEqualTo(1);
        assertThat(a.refCount()).as("the lock's reference is back").isEqualTo(1);
        assertThat(table.stats().expired()).isEqualTo(1);
        assertThat(table.stats().lockedBlocks()).isZero();
    }

    @Test
    void shouldAnswerZeroForAReleaseAfterExpiry() {
        SealedBlock a = block();
        String id = table.lock("r", retained(a));
        now.addAndGet(TIMEOUT);
        assertThat(table.sweep()).isEqualTo(1);

        assertThat(table.release(id)).isZero();
        assertThat(a.refCount()).isEqualTo(1);
    }

    @Test
    void shouldExpireOnALaterLockOrReleaseWithoutASweep() {
        SealedBlock a = block();
        SealedBlock b = block();
        String first = table.lock("r", retained(a));
        now.addAndGet(TIMEOUT / 2);
        String second = table.lock("r", retained(b));

        now.addAndGet(TIMEOUT / 2);
        table.release("unrelated");

        assertThat(a.refCount()).as("the first session expired on the release").isEqualTo(1);
        assertThat(b.refCount()).as("the second is still alive").isEqualTo(2);
        assertThat(table.release(first)).isZero();
        assertThat(table.release(second)).isEqualTo(1);
    }

    @Test
    void shouldEndEverySessionOfARequesterThatCameBackAsANewIncarnation() {
        SealedBlock a = block();
        SealedBlock b = block();
        SealedBlock c = block();
        String dead1 = table.lock("10.0.0.2:50055", retained(a));
        table.lock("10.0.0.2:50055", retained(b));
        String other = table.lock("10.0.0.3:50055", retained(c));

        assertThat(table.releaseRequester("10.0.0.2:50055")).isEqualTo(2);

        assertThat(a.refCount()).isEqualTo(1);
        assertThat(b.refCount()).isEqualTo(1);
        assertThat(c.refCount()).as("another requester's lock is untouched").isEqualTo(2);
        assertThat(table.release(dead1))
                .as("a late release of the dead incarnation")
                .isZero();
        assertThat(table.release(other)).isEqualTo(1);
        assertThat(table.stats().droppedByRequester()).isEqualTo(2);
    }

    @Test
    void shouldNotLeakSessionsOfAHolderThatDiedWithoutReleasing() {
        // The reference's incident: a requester that locks every few seconds and whose releases never arrive.
        SealedBlock a = block();
        for (int i = 0; i < 1000; i++) {
            table.lock("dead:1", retained(a));
            now.addAndGet(1_000_000_000L); // one lock a second
        }
        table.sweep();

        assertThat(table.size())
                .as("at most the sessions of the last timeout survive")
                .isLessThanOrEqualTo((int) (TIMEOUT / 1_000_000_000L));
        now.addAndGet(TIMEOUT);
        assertThat(table.sweep()).isPositive();
        assertThat(table.size()).isZero();
        assertThat(a.refCount()).isEqualTo(1);
        assertThat(table.stats().expired()).isEqualTo(1000);
    }

    @Test
    void shouldReleaseEachSessionOnceUnderRacingReleasesSweepsAndRequesterDrops() throws Exception {
        SealedBlock a = block();
        int sessions = 2000;
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < sessions; i++) {
            ids.add(table.lock("r" + (i % 4), retained(a)));
        }
        now.addAndGet(TIMEOUT - 1);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        CountDownLatch go = new CountDownLatch(1);
        AtomicLong releasedBlocks = new AtomicLong();
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                futures.add(pool.submit(() -> {
                    go.await();
                    for (String id : ids) {
                        releasedBlocks.addAndGet(table.release(id));
                    }
                    return null;
                }));
            }
            futures.add(pool.submit(() -> {
                go.await();
                now.addAndGet(1);
                table.sweep();
                return null;
            }));
            futures.add(pool.submit(() -> {
                go.await();
                table.releaseRequester("r3");
                return null;
            }));
            go.countDown();
            for (Future<?> f : futures) {
                f.get(20, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }

        TransferLockTable.Stats stats = table.stats();
        assertThat(stats.released() + stats.expired() + stats.droppedByRequester())
                .as("every session ended exactly once")
                .isEqualTo(sessions);
        assertThat(releasedBlocks.get()).isEqualTo(stats.released());
        assertThat(table.size()).isZero();
        assertThat(a.refCount()).isEqualTo(1);
    }

    @Test
    void shouldReleaseEverythingOnClear() {
        SealedBlock a = block();
        table.lock("r", retained(a));
        table.lock("s", retained(a));

        assertThat(table.clear()).isEqualTo(2);
        assertThat(a.refCount()).isEqualTo(1);
        assertThat(table.stats().lockedBlocks()).isZero();
    }

    @Test
    void shouldRefuseANonPositiveTimeout() {
        assertThatThrownBy(() -> new TransferLockTable(now::get, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("transfer lock timeout");
    }
}
