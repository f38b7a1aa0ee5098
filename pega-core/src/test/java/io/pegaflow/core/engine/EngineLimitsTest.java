package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.KIB;
import static io.pegaflow.core.engine.EngineHarness.MIB;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static io.pegaflow.core.engine.EngineHarness.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.engine.EngineHarness.Worker;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.core.tier.BackingTier;
import io.pegaflow.core.tier.ReclaimingAllocator;
import io.pegaflow.kernel.agent.AgentGroup;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every {@code pega.limits.*} cap (decision 0011, defects 4 and 5) on a real engine over real shared memory: the call
 * past it is RESOURCE_EXHAUSTED naming the key, nothing it would have taken is left behind (no mapping, device, lane
 * thread, lease, prefetch or pool allocation), what other clients hold is untouched, and the cap frees up with
 * teardown. {@link EngineHarness#close()} checks that nothing is outstanding at the end.
 */
@Timeout(60)
class EngineLimitsTest {
    private static final int BLOCK = (int) (64 * KIB);

    private final AgentGroup agents = new AgentGroup();
    private EngineHarness harness;

    private EngineHarness start(UnaryOperator<EngineLimits> limits, long poolBytes, List<BackingTier> tiers) {
        harness = new EngineHarness(
                EngineConfig.defaults(PoolConfig.of(poolBytes)), tiers, agents, limits.apply(EngineLimits.DEFAULTS));
        return harness;
    }

    private EngineHarness start(UnaryOperator<EngineLimits> limits) {
        return start(limits, MIB, List.of());
    }

    @AfterEach
    void tearDown() {
        if (harness != null) {
            harness.close();
        }
    }

    private static void assertExhausted(ThrowingCallable call, String message) {
        assertThatThrownBy(call).isInstanceOfSatisfying(EngineException.class, e -> {
            assertThat(e.kind()).isEqualTo(EngineException.Kind.RESOURCE_EXHAUSTED);
            assertThat(e.getMessage()).isEqualTo(message);
        });
    }

    private static EngineLimits with(
            EngineLimits l, int instances, int mapped, int devices, int lanes, int leases, int prefetches) {
        return new EngineLimits(l.requestPoolShare(), instances, mapped, devices, lanes, leases, prefetches);
    }

    @Test
    void shouldRefuseAnInstancePastTheCapAndAdmitItOnceOneLeft() {
        EngineHarness h = start(l -> with(l, 2, 99, 99, 198, 99, 99));
        Worker a = h.worker("a", 4, BLOCK);
        Worker b = h.worker("b", 4, BLOCK);
        Worker c = h.worker("c", 4, BLOCK);
        a.register();
        b.register();

        assertExhausted(c::register, "no more instances can be registered (2 live): pega.limits.instances is 2");
        assertThat(h.engine.instanceIds()).containsExactlyInAnyOrder("a", "b");
        assertThat(h.backend.mappedObjects()).as("nothing of c mapped").isEqualTo(2);
        assertThat(h.engine.deviceCount()).isEqualTo(2);

        h.engine.unregister("a");
        c.register();
        assertThat(h.engine.instanceIds()).containsExactlyInAnyOrder("b", "c");
    }

    @Test
    void shouldRefuseADevicePastTheCap() {
        EngineHarness h = start(l -> with(l, 99, 99, 2, 198, 99, 99));
        Worker d0 = h.worker("multi", EngineHarness.NAMESPACE, 1, 0, 4, BLOCK);
        Worker d1 = h.worker("multi", EngineHarness.NAMESPACE, 1, 1, 4, BLOCK);
        Worker d2 = h.worker("multi", EngineHarness.NAMESPACE, 1, 2, 4, BLOCK);
        d0.register();
        d1.register();
        int agentsBefore = agents.statuses().size();

        assertExhausted(d2::register, "no more devices can be registered (2 held): pega.limits.devices is 2");
        assertThat(agents.statuses()).as("no lane started").hasSize(agentsBefore);
        assertThat(h.backend.mappedObjects()).isEqualTo(2);

        h.engine.unregister("multi");
        assertThat(h.engine.deviceCount()).isZero();
        assertThat(h.engine.mappedObjectCount()).isZero();
        d2.register();
    }

    @Test
    void shouldRefuseADeviceWhoseLaneThreadsPassTheCap() {
        EngineHarness h = start(l -> with(l, 99, 99, 99, 5, 99, 99));
        Worker a = h.worker("a", 4, BLOCK);
        Worker b = h.worker("b", 4, BLOCK);
        Worker c = h.worker("c", 4, BLOCK);
        a.register();
        b.register();
        int agentsBefore = agents.statuses().size();

        assertExhausted(c::register, "a new device would start lane threads 5 and 6: pega.limits.lane-threads is 5");
        assertThat(agents.statuses()).as("no lane started").hasSize(agentsBefore);
        assertThat(h.engine.instanceIds()).containsExactlyInAnyOrder("a", "b");
        assertThat(h.backend.mappedObjects()).isEqualTo(2);
    }

    @Test
    void shouldRefuseMappingsPastTheCap() {
        EngineHarness h = start(l -> with(l, 99, 3, 99, 198, 99, 99));
        List<Worker> workers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            workers.add(h.worker("w" + i, 4, BLOCK));
        }
        for (int i = 0; i < 3; i++) {
            workers.get(i).register();
        }

        assertExhausted(
                workers.get(3)::register,
                "registering 1 more layers would map more than allowed (3 held): pega.limits.mapped-objects is 3");
        assertThat(h.backend.mappedObjects()).isEqualTo(3);
        assertThat(h.engine.mappedObjectCount()).isEqualTo(3);
        assertThat(h.engine.instanceIds()).doesNotContain("w3");

        h.engine.unregister("w0");
        workers.get(3).register();
        assertThat(h.backend.mappedObjects()).isEqualTo(3);
    }

    @Test
    void shouldRefuseALeasePastTheCapWithoutHoldingItsBlocks() {
        EngineHarness h = start(l -> with(l, 99, 99, 99, 198, 2, 99));
        Worker w = h.worker("leaser", 4, BLOCK);
        Worker other = h.worker("other", 4, BLOCK);
        w.register();
        other.register();
        w.fill(ids(0, 4), new long[] {1, 2, 3, 4});
        w.save(ids(0, 4), hashes(5, 4));
        h.engine.flushSeals();
        QueryOutcome first = w.query(hashes(5, 4), "r1");
        QueryOutcome second = w.query(hashes(5, 4), "r2");
        assertThat(first.hitBlocks()).isEqualTo(4);

        assertExhausted(
                () -> w.query(hashes(5, 4), "r3"),
                "instance leaser holds 2 query leases, release some first: pega.limits.leases-per-instance is 2");
        assertThat(h.engine.activeLeases()).isEqualTo(2);
        QueryOutcome others = other.query(hashes(5, 4), "o1");
        assertThat(others.hitBlocks()).as("another instance has its own count").isEqualTo(4);
        h.engine.release(others.lease());

        h.engine.release(first.lease());
        QueryOutcome third = w.query(hashes(5, 4), "r3");
        assertThat(third.hitBlocks()).isEqualTo(4);
        h.engine.release(second.lease());
        h.engine.release(third.lease());
    }

    /** A tier whose fetches stay running until {@link #finishAll()}: prefetch tasks that hold their slot. */
    private static final class HeldTier implements BackingTier {
        private final List<CompletableFuture<List<SealedBlock>>> fetches = new ArrayList<>();

        @Override
        public String tierName() {
            return "held";
        }

        @Override
        public synchronized CompletableFuture<List<SealedBlock>> fetchPrefix(
                List<BlockKey> keys, ReclaimingAllocator memory) {
            CompletableFuture<List<SealedBlock>> fetch = new CompletableFuture<>();
            fetches.add(fetch);
            return fetch;
        }

        synchronized void finishAll() {
            fetches.forEach(f -> f.complete(List.of()));
        }

        synchronized int started() {
            return fetches.size();
        }
    }

    @Test
    void shouldRefuseAPrefetchPastTheCapButLetTheSameRequestPoll() {
        HeldTier tier = new HeldTier();
        EngineHarness h = start(l -> with(l, 99, 99, 99, 198, 99, 2), MIB, List.of(tier));
        Worker w = h.worker("prefetcher", 4, BLOCK);
        w.register();
        try {
            assertThat(w.query(hashes(6, 2), "r1").loading()).isTrue();
            assertThat(w.query(hashes(7, 2), "r2").loading()).isTrue();

            assertExhausted(
                    () -> w.query(hashes(8, 2), "r3"),
                    "instance prefetcher has 2 prefetches running: pega.limits.prefetches-per-instance is 2");
            assertThat(tier.started()).as("no fetch started for r3").isEqualTo(2);
            assertThat(w.query(hashes(6, 2), "r1").loading())
                    .as("r1 polls its own task")
                    .isTrue();
        } finally {
            tier.finishAll();
        }
        assertThat(w.query(hashes(6, 2), "r1").hitBlocks()).isZero();
        assertThat(w.query(hashes(7, 2), "r2").hitBlocks()).isZero();
        assertThat(w.query(hashes(8, 2), "r3").loading()).as("room again").isTrue();
        tier.finishAll();
        assertThat(w.query(hashes(8, 2), "r3").hitBlocks()).isZero();
    }

    @Test
    void shouldFailASaveLargerThanItsShareBeforeEvictingAnything() {
        // 1 MiB pool, share 0.5: 512 KiB per request. Another tenant's 4 unleased blocks (256 KiB) are resident.
        EngineHarness h = start(l -> l, MIB, List.of());
        Worker victim = h.worker("victim", 4, BLOCK);
        Worker big = h.worker("big", 16, BLOCK);
        victim.register();
        big.register();
        victim.fill(ids(0, 4), new long[] {11, 12, 13, 14});
        victim.save(ids(0, 4), hashes(1, 4));
        h.engine.flushSeals();
        long cached = h.engine.cache().size();
        long used = h.engine.pool().usedBytes();

        assertExhausted(
                () -> big.save(ids(0, 9), hashes(2, 9)),
                "save of instance big needs 589824 bytes of pinned pool memory, more than one request may take"
                        + " (524288 of the 1048576-byte pool); nothing was evicted:"
                        + " pega.limits.request-pool-share is 0.5");
        assertThat(h.engine.cache().size()).as("nothing evicted").isEqualTo(cached);
        assertThat(h.engine.pool().usedBytes()).as("nothing allocated").isEqualTo(used);
        QueryOutcome hit = victim.query(hashes(1, 4), "still-there");
        assertThat(hit.hitBlocks()).isEqualTo(4);
        victim.zero();
        assertThat(victim.load(hit.lease(), ids(0, 4)).succeeded()).isTrue();
        victim.verify(ids(0, 4), new long[] {11, 12, 13, 14});

        big.save(ids(0, 8), hashes(3, 8)); // exactly the share: allowed (it may evict)
    }

    @Test
    void shouldFailAnAllocationNoShardCanHoldBeforeEvictingAnything() {
        harness = new EngineHarness(
                EngineConfig.defaults(new PoolConfig(MIB, 4, false, PoolConfig.NO_NUMA_NODE, 0, 0)),
                List.of(),
                agents,
                new EngineLimits(1.0, 99, 99, 99, 198, 99, 99));
        Worker w = harness.worker("wide", 16, BLOCK);
        w.register();
        w.fill(ids(0, 2), new long[] {1, 2});
        w.save(ids(0, 2), hashes(4, 2));
        harness.engine.flushSeals();

        assertExhausted(
                () -> w.save(ids(2, 7), hashes(5, 5)),
                "save of instance wide needs one 327680-byte pool allocation, more than a pool shard holds (262144"
                        + " bytes; pega.blockwise-alloc=true allocates per block); nothing was evicted:"
                        + " pega.pool.shards is 4");
        assertThat(harness.engine.cache().size()).isEqualTo(2);
    }
}
