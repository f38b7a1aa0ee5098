package io.pegaflow.core.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.jna.Pointer;
import io.pegaflow.kernel.memory.MemoryRegionInfo;
import io.pegaflow.sys.LibC;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PinnedMemoryPoolTest {
    private static final long KIB = 1024;
    private static final long MIB = 1024 * KIB;

    private final List<PinnedMemoryPool> pools = new ArrayList<>();

    @AfterEach
    void closePools() {
        for (PinnedMemoryPool pool : pools) {
            assertThat(pool.outstandingAllocations())
                    .as("allocations leaked by the test")
                    .isZero();
            pool.close();
        }
    }

    private PinnedMemoryPool pool(long capacityBytes, int shards) {
        return pool(new PoolConfig(capacityBytes, shards, false, PoolConfig.NO_NUMA_NODE, 0, 0));
    }

    private PinnedMemoryPool pool(PoolConfig config) {
        PinnedMemoryPool pool = PinnedMemoryPool.create(config);
        pools.add(pool);
        return pool;
    }

    @Test
    void shouldAlignEveryAllocationTo512Bytes() {
        PinnedMemoryPool pool = pool(MIB, 1);
        List<PinnedAllocation> held = new ArrayList<>();

        for (long size : new long[] {1, 511, 512, 513, 1000, 4097, 3}) {
            PinnedAllocation allocation = pool.allocate(size);
            assertThat(allocation.address() % 512).isZero();
            assertThat(allocation.sizeBytes()).isEqualTo(UnitScaledAllocator.ceilDiv(size, 512) * 512);
            held.add(allocation);
        }
        held.forEach(PinnedAllocation::release);
    }

    @Test
    void shouldAccountUsedBytesAtRoundedSizes() {
        PinnedMemoryPool pool = pool(MIB, 1);
        assertThat(pool.unitBytes()).isEqualTo(512);
        assertThat(pool.capacityBytes()).isEqualTo(MIB);
        assertThat(pool.largestFreeBytes()).isEqualTo(MIB);

        PinnedAllocation small = pool.allocate(1);
        PinnedAllocation medium = pool.allocate(1000);

        assertThat(pool.usedBytes()).isEqualTo(512 + 1024);
        assertThat(pool.outstandingAllocations()).isEqualTo(2);
        small.release();
        assertThat(pool.usedBytes()).isEqualTo(1024);
        medium.release();
        assertThat(pool.usedBytes()).isZero();
        assertThat(pool.outstandingAllocations()).isZero();
        assertThat(pool.largestFreeBytes()).isEqualTo(MIB);
        assertThat(pool.shard(0).nodesInUse()).isEqualTo(1);
    }

    @Test
    void shouldUseTheHintAsUnitAndRoundCapacityDown() {
        PinnedMemoryPool pool = pool(new PoolConfig(MIB + 100, 1, false, -1, 1000, 0));

        assertThat(pool.unitBytes()).isEqualTo(1024);
        assertThat(pool.capacityBytes()).isEqualTo(MIB);
        assertThat(pool.regions())
                .containsExactly(new MemoryRegionInfo(pool.regions().get(0).address(), MIB + 100));
        PinnedAllocation allocation = pool.allocate(1);
        assertThat(allocation.sizeBytes()).isEqualTo(1024);
        allocation.release();
    }

    @Test
    void shouldRotateTheStartShardAndFallBackToOtherShards() {
        PinnedMemoryPool pool = pool(8 * KIB, 2);
        List<MemoryRegionInfo> regions = pool.regions();
        assertThat(regions).hasSize(2);
        assertThat(pool.capacityBytes()).isEqualTo(8 * KIB);

        PinnedAllocation first = pool.allocate(512);
        PinnedAllocation second = pool.allocate(4 * KIB);
        PinnedAllocation third = pool.allocate(512);
        assertThat(regionOf(regions, first)).isZero();
        assertThat(regionOf(regions, second)).isEqualTo(1);
        assertThat(regionOf(regions, third)).isZero();

        // The cursor now starts at shard 1, which is full: the request moves on to shard 0.
        PinnedAllocation fallsBack = pool.allocate(512);
        assertThat(regionOf(regions, fallsBack)).isZero();

        for (PinnedAllocation a : List.of(first, second, third, fallsBack)) {
            a.release();
        }
    }

    @Test
    void shouldReturnNullWhenNoShardHasRoom() {
        PinnedMemoryPool pool = pool(8 * KIB, 2);
        PinnedAllocation a = pool.allocate(4 * KIB);
        PinnedAllocation b = pool.allocate(4 * KIB);

        assertThat(pool.allocate(1)).isNull();
        assertThat(pool.largestFreeBytes()).isZero();
        assertThat(pool.outstandingAllocations()).isEqualTo(2);
        a.release();
        assertThat(pool.allocate(8 * KIB)).as("larger than any shard").isNull();
        PinnedAllocation c = pool.allocate(4 * KIB);
        assertThat(c).isNotNull();
        b.release();
        c.release();
    }

    @Test
    void shouldRejectNonPositiveSizes() {
        PinnedMemoryPool pool = pool(MIB, 1);

        assertThatThrownBy(() -> pool.allocate(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> pool.allocate(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(pool.outstandingAllocations()).isZero();
    }

    @Test
    void shouldRejectShardsSmallerThanOneUnit() {
        assertThatThrownBy(() -> PinnedMemoryPool.create(new PoolConfig(1000, 2, false, -1, 0, 0)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("below one unit");
    }

    @Test
    void shouldCountReferencesAndFreeOnTheLastRelease() {
        PinnedMemoryPool pool = pool(MIB, 1);
        PinnedAllocation allocation = pool.allocate(4096);
        assertThat(allocation.refCount()).isEqualTo(1);

        allocation.retain();
        assertThat(allocation.tryRetain()).isTrue();
        assertThat(allocation.refCount()).isEqualTo(3);
        allocation.release();
        allocation.release();
        assertThat(pool.usedBytes()).isEqualTo(4096);
        assertThat(pool.outstandingAllocations()).isEqualTo(1);

        allocation.release();
        assertThat(allocation.refCount()).isZero();
        assertThat(pool.usedBytes()).isZero();
        assertThat(pool.outstandingAllocations()).isZero();
        assertThat(allocation.tryRetain()).isFalse();
        assertThatThrownBy(allocation::retain).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(allocation::release)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already released");
        assertThat(pool.usedBytes()).as("a failed release frees nothing twice").isZero();
    }

    @Test
    void shouldKeepBytesWrittenThroughTheAddress() {
        PinnedMemoryPool pool = pool(MIB, 1);
        PinnedAllocation a = pool.allocate(4096);
        PinnedAllocation b = pool.allocate(4096);

        LibC.memset(a.address(), 0x5A, a.sizeBytes());
        LibC.memset(b.address(), 0x33, b.sizeBytes());

        assertThat(new Pointer(a.address()).getByteArray(0, 4096)).containsOnly((byte) 0x5A);
        assertThat(new Pointer(b.address()).getByteArray(0, 4096)).containsOnly((byte) 0x33);
        a.release();
        b.release();
    }

    @Test
    void shouldCloseIdempotentlyAndRefuseLaterAllocations() {
        PinnedMemoryPool pool = PinnedMemoryPool.create(PoolConfig.of(64 * KIB));

        pool.close();
        pool.close();

        assertThat(pool.isUnmapped()).isTrue();
        assertThatThrownBy(() -> pool.allocate(1)).isInstanceOf(IllegalStateException.class);
        assertThat(pool.outstandingAllocations()).isZero();
    }

    @Test
    void shouldKeepRegionsMappedWhileAllocationsAreOutstanding() {
        PinnedMemoryPool pool = PinnedMemoryPool.create(PoolConfig.of(64 * KIB));
        PinnedAllocation allocation = pool.allocate(1024);

        pool.close();

        assertThat(pool.isUnmapped()).isFalse();
        assertThat(pool.outstandingAllocations()).isEqualTo(1);
        LibC.memset(allocation.address(), 7, allocation.sizeBytes());
        assertThat(new Pointer(allocation.address()).getByte(1023)).isEqualTo((byte) 7);
        allocation.release();
        assertThat(pool.outstandingAllocations()).isZero();
        assertThat(pool.isUnmapped()).isTrue();
    }

    @Test
    void shouldExposeOneRegionPerShardAndTheReadyTime() {
        PinnedMemoryPool pool = pool(new PoolConfig(2 * MIB, 2, false, -1, 0, 3));

        assertThat(pool.regions()).hasSize(2).allSatisfy(region -> {
            assertThat(region.lengthBytes()).isEqualTo(MIB);
            assertThat(region.address()).isNotZero();
        });
        assertThat(pool.readyNanos()).isPositive();
        assertThat(pool.regions().get(0).contains(pool.regions().get(1).address(), 1))
                .isFalse();
    }

    @Test
    void shouldFallBackToTransparentHugePagesOrUseHugetlb() {
        int hugePage = HugePages.sizeBytesFromMeminfo();
        PinnedMemoryPool pool = pool(new PoolConfig(MIB, 1, true, -1, 0, 0));

        BackingRegion region = pool.shard(0).region();
        assertThat(region.pageKind()).isIn(BackingRegion.PageKind.HUGETLB, BackingRegion.PageKind.TRANSPARENT_HUGE);
        assertThat(region.lengthBytes()).isEqualTo(HugePages.roundUp(MIB, hugePage));
        assertThat(pool.capacityBytes()).isEqualTo(region.lengthBytes());
        PinnedAllocation allocation = pool.allocate(MIB + 1);
        LibC.memset(allocation.address(), 1, allocation.sizeBytes());
        allocation.release();
    }

    @Test
    void shouldBindToANumaNodeOrCarryOnWithAWarning() {
        PinnedMemoryPool pool = pool(new PoolConfig(MIB, 1, false, 0, 0, 2));

        PinnedAllocation allocation = pool.allocate(MIB);
        LibC.memset(allocation.address(), 9, allocation.sizeBytes());
        assertThat(new Pointer(allocation.address()).getByte(MIB - 1)).isEqualTo((byte) 9);
        allocation.release();
    }

    private static int regionOf(List<MemoryRegionInfo> regions, PinnedAllocation allocation) {
        for (int i = 0; i < regions.size(); i++) {
            if (regions.get(i).contains(allocation.address(), allocation.sizeBytes())) {
                return i;
            }
        }
        throw new AssertionError("allocation outside every region: " + allocation);
    }
}
