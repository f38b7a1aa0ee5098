package io.pegaflow.core.device.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How a batched plan is shared out among submitting threads (decision 0015): which plans split, into how many slices,
 * and that the slices are the single submitter's calls, each exactly once, in order.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class BatchSplitTest {
    private static final long KIB = 1024;
    private static final CudaCopyConfig DEFAULTS = CudaCopyConfig.defaults();

    private static PlanShape shape(int ranges, long each) {
        return new PlanShape(ranges, ranges * each, true);
    }

    private static CopyPolicy policy(CudaCopyConfig c) {
        return new CopyPolicy(c, true, true);
    }

    @Test
    void shouldSplitTheJavaShapedPlanOfSmallFragmentsOverTwoSubmittersByDefault() {
        CopyPolicy p = policy(DEFAULTS);
        // 36 layers x 1024 blocks x K and V: the Qwen3-8B Save/Load of a 16-token-block request
        assertThat(p.submitters(CopyMode.BATCH, shape(73_728, 32 * KIB))).isEqualTo(2);
        assertThat(p.submitters(CopyMode.BATCH, shape(73_728, 16 * KIB))).isEqualTo(2);
        assertThat(p.submitters(CopyMode.BATCH, shape(36_864, 64 * KIB))).isEqualTo(2);
    }

    @Test
    void shouldKeepOneSubmitterForLargeRangesSmallPlansAndOtherMethods() {
        CopyPolicy p = policy(DEFAULTS);
        assertThat(p.submitters(CopyMode.BATCH, shape(9_216, DEFAULTS.splitBelowBytes())))
                .isEqualTo(1);
        assertThat(p.submitters(CopyMode.BATCH, shape(9_216, 256 * KIB))).isEqualTo(1);
        assertThat(p.submitters(CopyMode.BATCH, shape(DEFAULTS.splitMinRanges() - 1, 16 * KIB)))
                .isEqualTo(1);
        assertThat(p.submitters(CopyMode.BATCH, shape(DEFAULTS.splitMinRanges(), 16 * KIB)))
                .isEqualTo(2);
        assertThat(p.submitters(CopyMode.BATCH, shape(0, 0))).isEqualTo(1);
        assertThat(p.submitters(CopyMode.KERNEL, shape(73_728, 16 * KIB))).isEqualTo(1);
        assertThat(p.submitters(CopyMode.PER_RANGE, shape(73_728, 16 * KIB))).isEqualTo(1);
        assertThat(policy(DEFAULTS.withSubmitters(1)).submitters(CopyMode.BATCH, shape(73_728, 16 * KIB)))
                .isEqualTo(1);
    }

    @Test
    void shouldNeverGiveASubmitterLessThanOneWholeCall() {
        CudaCopyConfig c = new CudaCopyConfig(CopyMode.BATCH, 16, 64L << 20, 0, 0, 1024, 8, 1L << 20, 2);
        CopyPolicy p = policy(c);
        assertThat(p.submitters(CopyMode.BATCH, shape(2, 4 * KIB))).isEqualTo(1);
        assertThat(p.submitters(CopyMode.BATCH, shape(2047, 4 * KIB))).isEqualTo(1);
        assertThat(p.submitters(CopyMode.BATCH, shape(2048, 4 * KIB))).isEqualTo(2);
        assertThat(p.submitters(CopyMode.BATCH, shape(3 * 1024 + 5, 4 * KIB))).isEqualTo(3);
        assertThat(p.submitters(CopyMode.BATCH, shape(100_000, 4 * KIB))).isEqualTo(8);
        assertThat(BatchSplit.parts(0, 256, 2)).isEqualTo(1);
        assertThat(BatchSplit.parts(255, 256, 2)).isEqualTo(1);
        assertThat(BatchSplit.parts(1, 1, 4)).isEqualTo(1);
    }

    @Test
    void shouldCoverEveryCallOnceInOrderWithSlicesDifferingByAtMostOneCall() {
        int[][] cases = {
            {73_728, 256, 2},
            {73_728, 256, 3},
            {36_864, 256, 2},
            {513, 256, 2},
            {1_000_003, 256, 8},
            {7, 1, 3},
            {5_000, 4_999, 8},
            {65_536 * 3 + 1, 65_536, 3}
        };
        for (int[] k : cases) {
            int ranges = k[0];
            int max = k[1];
            int parts = BatchSplit.parts(ranges, max, k[2]);
            int calls = BatchDescriptors.calls(ranges, max);
            int expectedCall = 0;
            int expectedRange = 0;
            int least = Integer.MAX_VALUE;
            int most = 0;
            for (int s = 0; s < parts; s++) {
                int first = BatchSplit.firstCall(s, parts, calls);
                int end = BatchSplit.firstCall(s + 1, parts, calls);
                assertThat(first)
                        .as("slice %d of %d starts where the last ended", s, parts)
                        .isEqualTo(expectedCall);
                assertThat(end).as("slice %d of %d has a call", s, parts).isGreaterThan(first);
                assertThat(BatchSplit.firstRange(s, parts, ranges, max)).isEqualTo(expectedRange);
                for (int c = first; c < end; c++) {
                    assertThat(BatchDescriptors.callStart(c, max)).isEqualTo(expectedRange);
                    expectedRange += BatchDescriptors.callLength(c, ranges, max);
                }
                least = Math.min(least, end - first);
                most = Math.max(most, end - first);
                expectedCall = end;
            }
            assertThat(expectedCall).isEqualTo(calls);
            assertThat(expectedRange).isEqualTo(ranges);
            assertThat(BatchSplit.firstRange(parts, parts, ranges, max)).isEqualTo(ranges);
            assertThat(most - least)
                    .as("balance of %d ranges over %d", ranges, parts)
                    .isLessThanOrEqualTo(1);
        }
    }

    @Test
    void shouldRejectUnusableSubmitterSettingsNamingTheKey() {
        assertThatThrownBy(() -> new CudaCopyConfig(CopyMode.AUTO, 16, 64L << 20, 0, 0, 256, 0, 0, 2))
                .hasMessageStartingWith("pega.cuda.batch-submitters: 0");
        assertThatThrownBy(() -> new CudaCopyConfig(CopyMode.AUTO, 16, 64L << 20, 0, 0, 256, 9, 0, 2))
                .hasMessageStartingWith("pega.cuda.batch-submitters: 9");
        assertThatThrownBy(() -> new CudaCopyConfig(CopyMode.AUTO, 16, 64L << 20, 0, 0, 256, 2, -1, 2))
                .hasMessageStartingWith("pega.cuda.split-below: -1");
        assertThatThrownBy(() -> new CudaCopyConfig(CopyMode.AUTO, 16, 64L << 20, 0, 0, 256, 2, 0, 1))
                .hasMessageStartingWith("pega.cuda.split-min-ranges: 1");
        assertThat(DEFAULTS.batchSubmitters()).isEqualTo(2);
        assertThat(DEFAULTS.withMode(CopyMode.BATCH).batchSubmitters()).isEqualTo(2);
        assertThat(DEFAULTS.withSubmitters(3).batchSubmitters()).isEqualTo(3);
        assertThat(new CudaCopyConfig(CopyMode.AUTO, 16, 64L << 20, 0, 0, 256).batchSubmitters())
                .isEqualTo(1);
    }
}
