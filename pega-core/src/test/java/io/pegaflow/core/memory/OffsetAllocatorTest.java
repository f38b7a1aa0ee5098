package io.pegaflow.core.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class OffsetAllocatorTest {

    @Test
    void shouldStartAsOneFreeRegion() {
        OffsetAllocator allocator = new OffsetAllocator(1024, 1025);

        assertThat(allocator.freeUnits()).isEqualTo(1024);
        assertThat(allocator.largestFreeUnits()).isEqualTo(1024);
        assertThat(allocator.nodesInUse()).isEqualTo(1);
    }

    @Test
    void shouldHandOutConsecutiveOffsetsAndExactSizes() {
        OffsetAllocator allocator = new OffsetAllocator(1024, 1025);

        int a = allocator.allocate(3);
        int b = allocator.allocate(100);
        int c = allocator.allocate(1);

        assertThat(allocator.offsetUnits(a)).isZero();
        assertThat(allocator.offsetUnits(b)).isEqualTo(3);
        assertThat(allocator.offsetUnits(c)).isEqualTo(103);
        assertThat(allocator.sizeUnits(b)).isEqualTo(100);
        assertThat(allocator.freeUnits()).isEqualTo(1024 - 104);
    }

    @Test
    void shouldFailARequestWhoseRegionSitsInALowerBin() {
        // 17 units are filed in bin 16 (lower bound 16); a 17-unit request starts at bin 17 (lower bound 18).
        OffsetAllocator allocator = new OffsetAllocator(17, 18);

        assertThat(allocator.allocate(17)).isEqualTo(OffsetAllocator.NO_SPACE);
        assertThat(allocator.largestFreeUnits()).isEqualTo(16);
        assertThat(allocator.freeUnits()).isEqualTo(17);

        int handle = allocator.allocate(16);
        assertThat(allocator.offsetUnits(handle)).isZero();
        assertThat(allocator.freeUnits()).isEqualTo(1);
    }

    @Test
    void shouldReportTheLowerBoundOfTheHighestNonEmptyBin() {
        OffsetAllocator allocator = new OffsetAllocator(1000, 1001);

        assertThat(allocator.largestFreeUnits()).isEqualTo(960);
        assertThat(allocator.allocate(961)).isEqualTo(OffsetAllocator.NO_SPACE);
        assertThat(allocator.allocate(960)).isNotEqualTo(OffsetAllocator.NO_SPACE);
    }

    @Test
    void shouldReuseTheMostRecentlyFreedRegionOfABin() {
        OffsetAllocator allocator = new OffsetAllocator(64, 65);
        int a = allocator.allocate(4);
        allocator.allocate(1);
        int c = allocator.allocate(4);
        allocator.allocate(1);
        long offsetOfC = allocator.offsetUnits(c);

        allocator.free(a);
        allocator.free(c);
        int reused = allocator.allocate(4);

        assertThat(allocator.offsetUnits(reused)).isEqualTo(offsetOfC);
    }

    @Test
    void shouldMergeWithBothNeighboursOnFree() {
        OffsetAllocator allocator = new OffsetAllocator(64, 65);
        int a = allocator.allocate(8);
        int b = allocator.allocate(8);
        int c = allocator.allocate(8);

        allocator.free(a);
        allocator.free(c);
        assertThat(allocator.nodesInUse()).isEqualTo(3);
        allocator.free(b);

        assertThat(allocator.nodesInUse()).isEqualTo(1);
        assertThat(allocator.freeUnits()).isEqualTo(64);
        int whole = allocator.allocate(64);
        assertThat(allocator.offsetUnits(whole)).isZero();
    }

    @Test
    void shouldRefuseAllocationsOnceNodeIdsRunOut() {
        OffsetAllocator allocator = new OffsetAllocator(10, 3);
        int first = allocator.allocate(1);
        int second = allocator.allocate(1);

        assertThat(allocator.nodesInUse()).isEqualTo(3);
        assertThat(allocator.allocate(1)).isEqualTo(OffsetAllocator.NO_SPACE);
        assertThat(allocator.largestFreeUnits()).isZero();
        assertThat(allocator.freeUnits()).isEqualTo(8);

        allocator.free(first);
        allocator.free(second);

        assertThat(allocator.nodesInUse()).isEqualTo(1);
        assertThat(allocator.largestFreeUnits()).isEqualTo(10);
        assertThat(allocator.offsetUnits(allocator.allocate(10))).isZero();
    }

    @Test
    void shouldNeverRunOutOfNodeIdsWithOneMoreIdThanUnits() {
        OffsetAllocator allocator = new OffsetAllocator(3, 4);
        allocator.allocate(1);
        allocator.allocate(1);

        assertThat(allocator.allocate(1)).isNotEqualTo(OffsetAllocator.NO_SPACE);
        assertThat(allocator.allocate(1)).isEqualTo(OffsetAllocator.NO_SPACE);
    }

    @Test
    void shouldServeAFullThirtyTwoBitRange() {
        OffsetAllocator allocator = new OffsetAllocator(OffsetAllocator.MAX_UNITS, 16);

        int handle = allocator.allocate(0x8000_0000L);

        assertThat(allocator.offsetUnits(handle)).isZero();
        assertThat(allocator.sizeUnits(handle)).isEqualTo(0x8000_0000L);
        int next = allocator.allocate(0x4000_0000L);
        assertThat(allocator.offsetUnits(next)).isEqualTo(0x8000_0000L);
        allocator.free(handle);
        allocator.free(next);
        assertThat(allocator.freeUnits()).isEqualTo(OffsetAllocator.MAX_UNITS);
    }

    @Test
    void shouldRejectDoubleFreeAndBadArguments() {
        OffsetAllocator allocator = new OffsetAllocator(16, 17);
        int handle = allocator.allocate(2);
        allocator.free(handle);

        assertThatThrownBy(() -> allocator.free(handle)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> allocator.allocate(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> allocator.allocate(1L << 32)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new OffsetAllocator(0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new OffsetAllocator(16, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
