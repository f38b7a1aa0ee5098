package io.pegaflow.core.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The reference's seven allocator tests ({@code pegaflow-core/src/allocator.rs} of novitalabs/pegaflow v0.22.4) plus
 * the unit rule.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class UnitScaledAllocatorTest {
    private static final long MIB = 1024 * 1024;
    private static final long GIB = 1024 * MIB;
    private static final int MAX_ALLOCS = 128 * 1024;

    @Test
    void shouldScaleCapacityToUnits() {
        UnitScaledAllocator allocator = new UnitScaledAllocator(10 * GIB, 64, MAX_ALLOCS);

        assertThat(allocator.unitBytes()).isEqualTo(64);
        assertThat(allocator.units().capacityUnits()).isEqualTo(10 * GIB / 64);
        assertThat(allocator.capacityBytes()).isEqualTo(10 * GIB);
    }

    @Test
    void shouldRoundRequestsUpToTheUnit() {
        UnitScaledAllocator allocator = new UnitScaledAllocator(1024, 64, MAX_ALLOCS);

        int handle = allocator.allocate(1);

        assertThat(allocator.offsetBytes(handle)).isZero();
        assertThat(allocator.sizeBytes(handle)).isEqualTo(64);
        assertThat(allocator.freeBytes()).isEqualTo(960);
        assertThat(allocator.largestFreeBytes()).isEqualTo(960);
    }

    @Test
    void shouldRoundCapacityDownToWholeUnits() {
        UnitScaledAllocator allocator = new UnitScaledAllocator(GIB + 123 * MIB, 256 * MIB, MAX_ALLOCS);

        assertThat(allocator.units().capacityUnits()).isEqualTo(4);
        assertThat(allocator.capacityBytes()).isEqualTo(GIB);
        assertThat(allocator.freeBytes()).isEqualTo(GIB);
        assertThat(allocator.largestFreeBytes()).isEqualTo(GIB);
    }

    @Test
    void shouldNotAllocatePastTheAlignedEnd() {
        long unit = 256 * MIB;
        UnitScaledAllocator allocator = new UnitScaledAllocator(GIB + 123 * MIB, unit, MAX_ALLOCS);

        for (int i = 0; i < 4; i++) {
            int handle = allocator.allocate(unit);
            assertThat(allocator.offsetBytes(handle)).isEqualTo(i * unit);
            assertThat(allocator.sizeBytes(handle)).isEqualTo(unit);
        }
        assertThat(allocator.allocate(1)).isEqualTo(OffsetAllocator.NO_SPACE);
    }

    @Test
    void shouldMergeAdjacentFreedRegions() {
        UnitScaledAllocator allocator = new UnitScaledAllocator(256, 64, MAX_ALLOCS);
        int first = allocator.allocate(64);
        int second = allocator.allocate(64);

        allocator.free(first);
        allocator.free(second);
        int merged = allocator.allocate(128);

        assertThat(allocator.offsetBytes(merged)).isZero();
        assertThat(allocator.sizeBytes(merged)).isEqualTo(128);
    }

    @Test
    void shouldRejectRequestsBeyondThirtyTwoBitUnits() {
        UnitScaledAllocator allocator = new UnitScaledAllocator(MIB, 1, MAX_ALLOCS);

        assertThatThrownBy(() -> allocator.allocate(2 * 0xFFFF_FFFFL))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("exceeds 2^32-1 units");
    }

    @Test
    void shouldRejectUnitZero() {
        assertThatThrownBy(() -> new UnitScaledAllocator(1024, 0, MAX_ALLOCS))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unitBytes");
    }

    @Test
    void shouldRejectZeroByteRequestsAndCapacityBelowOneUnit() {
        UnitScaledAllocator allocator = new UnitScaledAllocator(1024, 64, MAX_ALLOCS);

        assertThatThrownBy(() -> allocator.allocate(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new UnitScaledAllocator(63, 64, MAX_ALLOCS))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldDeriveTheUnitFromHintAndCapacity() {
        assertThat(UnitScaledAllocator.unitBytesFor(30 * GIB, 0)).isEqualTo(512);
        assertThat(UnitScaledAllocator.unitBytesFor(30 * GIB, 1)).isEqualTo(512);
        assertThat(UnitScaledAllocator.unitBytesFor(30 * GIB, 1000)).isEqualTo(1024);
        assertThat(UnitScaledAllocator.unitBytesFor(30 * GIB, 2 * MIB)).isEqualTo(2 * MIB);
        // 2 TiB in 512-byte units is exactly 2^32 units, one too many: the unit grows to the next multiple of 512.
        assertThat(UnitScaledAllocator.unitBytesFor(2048 * GIB, 0)).isEqualTo(1024);
        assertThat(UnitScaledAllocator.unitBytesFor(4096 * GIB, 0)).isEqualTo(1536);
    }

    @Test
    void shouldSizeTheNodePoolFromUnits() {
        assertThat(UnitScaledAllocator.maxAllocsFor(16)).isEqualTo(17);
        assertThat(UnitScaledAllocator.maxAllocsFor(0xFFFF_FFFFL)).isEqualTo(4_000_000);
    }
}
