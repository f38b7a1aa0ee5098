package io.pegaflow.kernel.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The one coalescing rule of every copy batch. */
@Timeout(10)
class RangePlanTest {
    private static final long SRC = 1L << 40;
    private static final long DST = 1L << 30;
    private static final long BLOCK = 4096;

    @Test
    void shouldMergeARangeThatContinuesBothSides() {
        RangePlan plan = new RangePlan(4);
        for (int i = 0; i < 8; i++) {
            plan.add(SRC + i * BLOCK, DST + i * BLOCK, BLOCK);
        }
        assertThat(plan.size()).isEqualTo(1);
        assertThat(plan.srcAddress(0)).isEqualTo(SRC);
        assertThat(plan.dstAddress(0)).isEqualTo(DST);
        assertThat(plan.lengthBytes(0)).isEqualTo(8 * BLOCK);
        assertThat(plan.totalBytes()).isEqualTo(8 * BLOCK);
    }

    @Test
    void shouldNeverMergeAcrossAFence() {
        RangePlan plan = new RangePlan(4);
        plan.add(SRC, DST, BLOCK);
        plan.fence();
        plan.fence(); // a second fence before the next range changes nothing
        plan.add(SRC + BLOCK, DST + BLOCK, BLOCK); // continues both sides, but another allocation
        plan.add(SRC + 2 * BLOCK, DST + 2 * BLOCK, BLOCK); // merges again after the fenced range
        assertThat(plan.size()).isEqualTo(2);
        assertThat(plan.lengthBytes(0)).isEqualTo(BLOCK);
        assertThat(plan.srcAddress(1)).isEqualTo(SRC + BLOCK);
        assertThat(plan.lengthBytes(1)).isEqualTo(2 * BLOCK);
        RangePlan fencedFirst = new RangePlan(1);
        fencedFirst.fence();
        fencedFirst.add(SRC, DST, BLOCK);
        assertThat(fencedFirst.size()).isEqualTo(1);
    }

    @Test
    void shouldNotMergeWhenOnlyOneSideContinues() {
        RangePlan plan = new RangePlan(4);
        plan.add(SRC, DST, BLOCK);
        plan.add(SRC + BLOCK, DST + 2 * BLOCK, BLOCK); // source continues, destination jumps
        plan.add(SRC + 3 * BLOCK, DST + 3 * BLOCK, BLOCK); // destination continues, source jumps
        assertThat(plan.size()).isEqualTo(3);
        assertThat(plan.totalBytes()).isEqualTo(3 * BLOCK);
    }

    @Test
    void shouldOnlyMergeWithThePreviousRange() {
        RangePlan plan = new RangePlan(4);
        plan.add(SRC, DST, BLOCK);
        plan.add(SRC + 10 * BLOCK, DST + 10 * BLOCK, BLOCK);
        plan.add(SRC + BLOCK, DST + BLOCK, BLOCK); // continues the first, not the last: a new range
        assertThat(plan.size()).isEqualTo(3);
    }

    @Test
    void shouldIgnoreEmptyRanges() {
        RangePlan plan = new RangePlan(4);
        plan.add(SRC, DST, 0);
        plan.add(SRC, DST, -1);
        assertThat(plan.isEmpty()).isTrue();
        assertThat(plan.totalBytes()).isZero();
    }

    @Test
    void shouldGrowPastItsExpectedSize() {
        RangePlan plan = new RangePlan(1);
        for (int i = 0; i < 1000; i++) {
            plan.add(SRC + 2L * i * BLOCK, DST + i * BLOCK, BLOCK); // source gaps: nothing merges
        }
        assertThat(plan.size()).isEqualTo(1000);
        assertThat(plan.srcAddress(999)).isEqualTo(SRC + 1998 * BLOCK);
        assertThat(plan.dstAddress(999)).isEqualTo(DST + 999 * BLOCK);
    }

    @Test
    void shouldCapMergedRangesAtTheRuleLimit() {
        RangePlan plan = new RangePlan(4, MergeRule.upTo(3 * BLOCK));
        for (int i = 0; i < 7; i++) {
            plan.add(SRC + i * BLOCK, DST + i * BLOCK, BLOCK);
        }
        assertThat(plan.size()).isEqualTo(3);
        assertThat(plan.lengthBytes(0)).isEqualTo(3 * BLOCK);
        assertThat(plan.lengthBytes(1)).isEqualTo(3 * BLOCK);
        assertThat(plan.lengthBytes(2)).isEqualTo(BLOCK);
        assertThat(plan.srcAddress(1)).isEqualTo(SRC + 3 * BLOCK);
        assertThat(plan.totalBytes()).isEqualTo(7 * BLOCK);
    }

    @Test
    void shouldKeepEveryRangeUnderTheNeverRule() {
        RangePlan plan = new RangePlan(4, MergeRule.NEVER);
        for (int i = 0; i < 5; i++) {
            plan.add(SRC + i * BLOCK, DST + i * BLOCK, BLOCK);
        }
        assertThat(plan.size()).isEqualTo(5);
        assertThat(plan.mergeRule()).isEqualTo(MergeRule.NEVER);
    }

    @Test
    void shouldNotOverflowWhenMergingHugeRanges() {
        RangePlan plan = new RangePlan(2);
        plan.add(0, 0, Long.MAX_VALUE / 2);
        plan.add(Long.MAX_VALUE / 2, Long.MAX_VALUE / 2, Long.MAX_VALUE / 2);
        assertThat(plan.size()).isEqualTo(1);
        RangePlan capped = new RangePlan(2, MergeRule.upTo(Long.MAX_VALUE - 1));
        capped.add(0, 0, Long.MAX_VALUE - 1);
        capped.add(Long.MAX_VALUE - 1, Long.MAX_VALUE - 1, 1);
        assertThat(capped.size()).as("the merge would exceed the limit").isEqualTo(2);
    }

    @Test
    void shouldReverseEveryRangeKeepingItsMerges() {
        RangePlan plan = new RangePlan(4);
        plan.add(SRC, DST, BLOCK);
        plan.add(SRC + BLOCK, DST + BLOCK, BLOCK);
        plan.add(SRC + 8 * BLOCK, DST + 2 * BLOCK, BLOCK);
        RangePlan back = plan.reversed();
        assertThat(back.size()).isEqualTo(2);
        assertThat(back.srcAddress(0)).isEqualTo(DST);
        assertThat(back.dstAddress(0)).isEqualTo(SRC);
        assertThat(back.lengthBytes(0)).isEqualTo(2 * BLOCK);
        assertThat(back.srcAddress(1)).isEqualTo(DST + 2 * BLOCK);
        assertThat(back.dstAddress(1)).isEqualTo(SRC + 8 * BLOCK);
        assertThat(back.totalBytes()).isEqualTo(plan.totalBytes());
        assertThat(back.mergeRule()).isEqualTo(plan.mergeRule());
    }

    @Test
    void shouldRefuseANegativeLimit() {
        assertThatThrownBy(() -> MergeRule.upTo(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("merge limit: -1 bytes (expected: >= 0)");
    }
}
