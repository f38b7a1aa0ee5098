package io.pegaflow.core.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The query-lease state machine ({@code pegaflow-core/src/lease.rs} of novitalabs/pegaflow v0.22.4) on real ref-counted
 * blocks and an adjustable clock.
 */
@Timeout(30)
class LeaseTableTest {
    private static final long TTL_NANOS = 600_000_000_000L;

    private final PinnedMemoryPool pool = PinnedMemoryPool.create(PoolConfig.of(1 << 20));
    private final AtomicLong now = new AtomicLong(5_000_000_000L);
    private final LeaseTable table = new LeaseTable(now::get, TTL_NANOS);
    private final List<SealedBlock> cacheRefs = new ArrayList<>();

    @AfterEach
    void tearDown() {
        table.clear();
        cacheRefs.forEach(SealedBlock::release);
        assertThat(pool.outstandingAllocations()).as("allocations leaked").isZero();
        pool.close();
    }

    /** A one-slot block whose first reference stands for the cache's; the test releases it in teardown. */
    private SealedBlock block() {
        PinnedAllocation allocation = pool.allocate(4096);
        SlotData slot = SlotData.contiguous(allocation, allocation.address(), 4096);
        allocation.release();
        SealedBlock block = new SealedBlock(new SlotData[] {slot});
        cacheRefs.add(block);
        return block;
    }

    /** Blocks retained for a lease, as a query hands them over. */
    private SealedBlock[] leased(SealedBlock... blocks) {
        for (SealedBlock b : blocks) {
            b.retain();
        }
        return blocks;
    }

    private static void release(SealedBlock[] blocks) {
        for (SealedBlock b : blocks) {
            b.release();
        }
    }

    @Test
    void shouldRejectLeaseWithoutBlocks() {
        assertThatThrownBy(() -> table.create("i", new SealedBlock[0], 1))
                .isInstanceOfSatisfying(EngineException.class, e -> {
                    assertThat(e.kind()).isEqualTo(EngineException.Kind.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).isEqualTo("invalid argument: a query lease needs at least one block");
                });
    }

    @Test
    void shouldIssueVersion4UuidBytes() {
        LeaseId id = table.create("i", leased(block()), 1);

        byte[] bytes = id.toBytes();

        assertThat(bytes).hasSize(16);
        assertThat((bytes[6] & 0xF0) >>> 4).as("version").isEqualTo(4);
        assertThat((bytes[8] & 0xC0) >>> 6).as("variant").isEqualTo(2);
        assertThat(LeaseId.parse(bytes)).isEqualTo(id);
    }

    @Test
    void shouldHandOutWorldSizeSharesThenForgetTheLease() {
        SealedBlock a = block();
        SealedBlock b = block();
        LeaseId id = table.create("i", leased(a, b), 2);

        SealedBlock[] first = table.consume("i", id);
        assertThat(a.refCount()).as("cache + lease + first load").isEqualTo(3);
        assertThat(table.size()).isEqualTo(1);
        SealedBlock[] second = table.consume("i", id);
        assertThat(a.refCount())
                .as("the lease's own reference moved to the second load")
                .isEqualTo(3);
        assertThat(table.size()).isZero();

        assertThat(first).containsExactly(a, b);
        assertThat(second).containsExactly(a, b);
        assertThatThrownBy(() -> table.consume("i", id)).hasMessage("storage error: query lease is unknown or expired");
        release(first);
        release(second);
        assertThat(a.refCount()).isEqualTo(1);
        assertThat(b.refCount()).isEqualTo(1);
    }

    @Test
    void shouldTreatZeroConsumersAsOne() {
        LeaseId id = table.create("i", leased(block()), 0);

        release(table.consume("i", id));

        assertThat(table.size()).isZero();
    }

    @Test
    void shouldLeaveLeaseUntouchedWhenAnotherInstanceConsumes() {
        SealedBlock a = block();
        LeaseId id = table.create("owner", leased(a), 1);

        assertThatThrownBy(() -> table.consume("other", id)).isInstanceOfSatisfying(EngineException.class, e -> {
            assertThat(e.kind()).isEqualTo(EngineException.Kind.INTERNAL);
            assertThat(e.getMessage()).isEqualTo("storage error: query lease belongs to instance owner, got other");
        });

        assertThat(a.refCount()).isEqualTo(2);
        release(table.consume("owner", id));
        assertThat(a.refCount()).isEqualTo(1);
    }

    @Test
    void shouldReleaseOnceWhateverTheRemainingShares() {
        SealedBlock a = block();
        LeaseId id = table.create("i", leased(a), 8);
        release(table.consume("i", id));

        assertThat(table.release(id)).isTrue();
        assertThat(table.release(id)).isFalse();
        assertThat(a.refCount()).isEqualTo(1);
    }

    @Test
    void shouldDropOnlyTheTornDownInstancesLeases() {
        SealedBlock a = block();
        table.create("x", leased(a), 1);
        table.create("x", leased(a), 3);
        LeaseId kept = table.create("y", leased(a), 1);

        assertThat(table.releaseInstance("x")).isEqualTo(2);

        assertThat(table.size()).isEqualTo(1);
        assertThat(a.refCount()).isEqualTo(2);
        release(table.consume("y", kept));
    }

    @Test
    void shouldExpireExactlyAtTtl() {
        SealedBlock a = block();
        LeaseId early = table.create("i", leased(a), 1);
        now.addAndGet(TTL_NANOS / 2);
        LeaseId late = table.create("i", leased(a), 1);

        now.addAndGet(TTL_NANOS / 2 - 1);
        assertThat(table.sweep()).isZero();
        now.addAndGet(1);
        assertThat(table.sweep()).as("the first lease reached its TTL").isEqualTo(1);

        assertThatThrownBy(() -> table.consume("i", early))
                .hasMessage("storage error: query lease is unknown or expired");
        assertThat(a.refCount()).isEqualTo(2);
        now.addAndGet(TTL_NANOS / 2);
        assertThat(table.release(late))
                .as("expired leases are swept before the lookup")
                .isFalse();
        assertThat(a.refCount()).isEqualTo(1);
    }

    @Test
    void shouldSweepExpiredLeasesWhenCreatingAnother() {
        SealedBlock a = block();
        table.create("i", leased(a), 1);
        now.addAndGet(TTL_NANOS);
        LeaseId fresh = table.create("i", leased(a), 1);

        assertThat(table.size()).isEqualTo(1);
        release(table.consume("i", fresh));
        assertThat(a.refCount()).isEqualTo(1);
    }

    @Test
    void shouldParseWireIdsWithReferenceMessages() {
        assertThatThrownBy(() -> LeaseId.parse(new byte[0])).isInstanceOfSatisfying(EngineException.class, e -> {
            assertThat(e.kind()).isEqualTo(EngineException.Kind.INVALID_ARGUMENT);
            assertThat(e.getMessage()).isEqualTo("query lease id must be non-empty");
        });
        assertThatThrownBy(() -> LeaseId.parse(new byte[15])).hasMessage("query lease id must be 16 bytes, got 15");
        assertThatThrownBy(() -> LeaseId.parse(new byte[17])).hasMessage("query lease id must be 16 bytes, got 17");
        byte[] raw = new byte[16];
        raw[0] = 1;
        raw[15] = (byte) 0xFF;
        assertThat(LeaseId.parse(raw).toBytes()).isEqualTo(raw);
    }
}
