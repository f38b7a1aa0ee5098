package io.pegaflow.core.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Random allocate/free sequences against a model of live ranges: ranges never overlap, stay inside the capacity,
 * free space is exact at every step, and freeing everything merges back into one region.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OffsetAllocatorPropertyTest {
    private static final int STEPS = 20_000;

    @ParameterizedTest(name = "seed {0}, {1} units, {2} node ids, sizes up to {3}")
    @CsvSource({
        "1, 4096, 4097, 64",
        "2, 3072, 3073, 300",
        "3, 1000, 1001, 17",
        "4, 65536, 65537, 4096",
        "5, 4096, 24, 200",
        "6, 1, 2, 1"
    })
    void shouldKeepRangesDisjointAndMergeBackToOneRegion(long seed, long capacity, int maxAllocs, int maxRequest) {
        Random random = new Random(seed);
        OffsetAllocator allocator = new OffsetAllocator(capacity, maxAllocs);
        TreeMap<Long, Long> live = new TreeMap<>();
        List<Integer> handles = new ArrayList<>();
        long liveUnits = 0;

        for (int step = 0; step < STEPS; step++) {
            boolean allocate = handles.isEmpty() || random.nextInt(100) < 55;
            if (allocate) {
                long units = 1L + random.nextInt(maxRequest);
                int handle = allocator.allocate(units);
                if (handle == OffsetAllocator.NO_SPACE) {
                    continue;
                }
                long offset = allocator.offsetUnits(handle);
                assertThat(allocator.sizeUnits(handle)).isEqualTo(units);
                assertDisjointAndInside(live, offset, units, capacity);
                live.put(offset, units);
                handles.add(handle);
                liveUnits += units;
            } else {
                int handle = handles.remove(random.nextInt(handles.size()));
                liveUnits -= live.remove(allocator.offsetUnits(handle));
                allocator.free(handle);
            }
            assertThat(allocator.freeUnits()).isEqualTo(capacity - liveUnits);
            assertThat(allocator.largestFreeUnits()).isLessThanOrEqualTo(capacity - liveUnits);
        }

        Collections.shuffle(handles, random);
        for (int handle : handles) {
            allocator.free(handle);
        }
        long representable = SmallFloat.binLowerBound(SmallFloat.binRoundDown(capacity));
        assertThat(allocator.nodesInUse()).isEqualTo(1);
        assertThat(allocator.freeUnits()).isEqualTo(capacity);
        assertThat(allocator.largestFreeUnits()).isEqualTo(representable);
        int whole = allocator.allocate(representable);
        assertThat(allocator.offsetUnits(whole)).isZero();
    }

    private static void assertDisjointAndInside(NavigableMap<Long, Long> live, long offset, long units, long capacity) {
        assertThat(offset).isNotNegative();
        assertThat(offset + units).isLessThanOrEqualTo(capacity);
        Map.Entry<Long, Long> below = live.floorEntry(offset);
        if (below != null) {
            assertThat(below.getKey() + below.getValue())
                    .as("range [%d,+%d) overlaps [%d,+%d)", offset, units, below.getKey(), below.getValue())
                    .isLessThanOrEqualTo(offset);
        }
        Map.Entry<Long, Long> above = live.ceilingEntry(offset);
        if (above != null) {
            assertThat(offset + units)
                    .as("range [%d,+%d) overlaps [%d,+%d)", offset, units, above.getKey(), above.getValue())
                    .isLessThanOrEqualTo(above.getKey());
        }
    }
}
