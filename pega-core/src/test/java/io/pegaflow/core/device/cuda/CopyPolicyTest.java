package io.pegaflow.core.device.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.kernel.plan.RangePlan;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Which method a plan takes, in every mode, with and without the device's batch and kernel support. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CopyPolicyTest {
    private static final long KIB = 1024;
    /** auto with the kernel enabled below 32 KiB (the default leaves it off: docs/gpu.md, "Copy methods"). */
    private static final CudaCopyConfig AUTO = new CudaCopyConfig(CopyMode.AUTO, 16, 64L << 20, 32 * KIB, 0, 256);

    private static PlanShape shape(int ranges, long each, boolean aligned) {
        return new PlanShape(ranges, ranges * each, aligned);
    }

    @Test
    void shouldTakeTheKernelOnlyForManySmallCoalignedRangesInAuto() {
        CopyPolicy p = new CopyPolicy(AUTO, true, true);
        assertThat(p.choose(shape(4096, 16 * KIB, true))).isEqualTo(CopyMode.KERNEL);
        assertThat(p.choose(shape(4096, 4 * KIB, true))).isEqualTo(CopyMode.KERNEL);
        assertThat(p.choose(shape(4096, AUTO.kernelBelowBytes(), true))).isEqualTo(CopyMode.BATCH);
        assertThat(p.choose(shape(4096, 64 * KIB, true))).isEqualTo(CopyMode.BATCH);
        assertThat(p.choose(shape(4096, 2048 * KIB, true))).isEqualTo(CopyMode.BATCH);
        assertThat(p.choose(shape(CopyPolicy.MIN_KERNEL_RANGES - 1, 16 * KIB, true)))
                .isEqualTo(CopyMode.BATCH);
        assertThat(p.choose(shape(CopyPolicy.MIN_KERNEL_RANGES, 16 * KIB, true)))
                .isEqualTo(CopyMode.KERNEL);
    }

    @Test
    void shouldSendMisalignedSmallRangesToTheBatchInAutoButKeepThemOnAForcedKernel() {
        assertThat(new CopyPolicy(AUTO, true, true).choose(shape(4096, 16 * KIB, false)))
                .isEqualTo(CopyMode.BATCH);
        assertThat(new CopyPolicy(AUTO.withMode(CopyMode.KERNEL), true, true).choose(shape(4096, 16 * KIB, false)))
                .isEqualTo(CopyMode.KERNEL);
    }

    @Test
    void shouldCopyEmptyPlansAndOneHugeRangeOneCallPerRange() {
        CopyPolicy p = new CopyPolicy(AUTO, true, true);
        assertThat(p.choose(shape(0, 0, true))).isEqualTo(CopyMode.PER_RANGE);
        assertThat(p.choose(new PlanShape(1, 1L << 40, true))).isEqualTo(CopyMode.PER_RANGE);
        assertThat(p.choose(shape(2, 16 * KIB, true))).isEqualTo(CopyMode.BATCH);
    }

    @Test
    void shouldDegradeAForcedModeTheDeviceCannotRun() {
        PlanShape s = shape(4096, 16 * KIB, true);
        assertThat(new CopyPolicy(AUTO.withMode(CopyMode.KERNEL), true, false).choose(s))
                .isEqualTo(CopyMode.BATCH);
        assertThat(new CopyPolicy(AUTO.withMode(CopyMode.KERNEL), false, false).choose(s))
                .isEqualTo(CopyMode.PER_RANGE);
        assertThat(new CopyPolicy(AUTO.withMode(CopyMode.BATCH), false, true).choose(s))
                .isEqualTo(CopyMode.PER_RANGE);
        assertThat(new CopyPolicy(AUTO, false, false).choose(s)).isEqualTo(CopyMode.PER_RANGE);
        assertThat(new CopyPolicy(AUTO, true, false).choose(s)).isEqualTo(CopyMode.BATCH);
        assertThat(new CopyPolicy(AUTO, false, true).choose(shape(4096, 64 * KIB, true)))
                .isEqualTo(CopyMode.PER_RANGE);
    }

    @Test
    void shouldHonourForcedModesWhateverTheShape() {
        for (PlanShape s :
                new PlanShape[] {shape(1, 4 * KIB, true), shape(4096, 16 * KIB, true), shape(8, 2048 * KIB, false)}) {
            assertThat(new CopyPolicy(AUTO.withMode(CopyMode.PER_RANGE), true, true).choose(s))
                    .isEqualTo(CopyMode.PER_RANGE);
            assertThat(new CopyPolicy(AUTO.withMode(CopyMode.BATCH), true, true).choose(s))
                    .isEqualTo(CopyMode.BATCH);
            assertThat(new CopyPolicy(AUTO.withMode(CopyMode.KERNEL), true, true).choose(s))
                    .isEqualTo(CopyMode.KERNEL);
        }
    }

    @Test
    void shouldNeverTakeTheKernelInAutoByDefault() {
        CudaCopyConfig defaults = CudaCopyConfig.defaults();
        assertThat(defaults.kernelBelowBytes()).isZero();
        for (long each : new long[] {64, 4 * KIB, 16 * KIB, 64 * KIB}) {
            assertThat(new CopyPolicy(defaults, true, true).choose(shape(65536, each, true)))
                    .isEqualTo(CopyMode.BATCH);
        }
        assertThat(new CopyPolicy(defaults.withMode(CopyMode.KERNEL), true, true).choose(shape(65536, 4 * KIB, true)))
                .isEqualTo(CopyMode.KERNEL);
    }

    @Test
    void shouldSerializeOnlySmallBatchedPlans() {
        CudaCopyConfig c = new CudaCopyConfig(CopyMode.AUTO, 16, 64L << 20, 0, 64 * KIB, 1024);
        CopyPolicy p = new CopyPolicy(c, true, true);
        assertThat(p.serialize(CopyMode.BATCH, shape(4096, 32 * KIB, true))).isTrue();
        assertThat(p.serialize(CopyMode.BATCH, shape(4096, 64 * KIB, true))).isFalse();
        assertThat(p.serialize(CopyMode.KERNEL, shape(4096, 32 * KIB, true))).isFalse();
        assertThat(p.serialize(CopyMode.BATCH, shape(1, 32 * KIB, true))).isFalse();
        assertThat(new CopyPolicy(CudaCopyConfig.defaults(), true, true)
                        .serialize(CopyMode.BATCH, shape(4096, 4 * KIB, true)))
                .as("lanes never take turns by default")
                .isFalse();
    }

    @Test
    void shouldMeasureAPlanInOnePass() {
        RangePlan plan = new RangePlan(4);
        assertThat(PlanShape.of(plan)).isEqualTo(new PlanShape(0, 0, true));
        assertThat(PlanShape.of(plan).meanRangeBytes()).isZero();
        plan.add(0x10000, 0x7000_0000L, 4096);
        plan.add(0x30000, 0x7000_1000L, 4096);
        assertThat(PlanShape.of(plan)).isEqualTo(new PlanShape(2, 8192, true));
        plan.add(0x50008, 0x7000_2000L, 4096); // device 8 bytes off the host's 16-byte phase
        assertThat(PlanShape.of(plan).coaligned16()).isFalse();
        RangePlan skewedTogether = new RangePlan(1);
        skewedTogether.add(0x50008, 0x7000_0008L, 100); // same phase on both sides: the vector path still applies
        assertThat(PlanShape.of(skewedTogether)).isEqualTo(new PlanShape(1, 100, true));
    }

    @Test
    void shouldParseModesAndRejectAnythingElse() {
        assertThat(CopyMode.parse("auto")).isEqualTo(CopyMode.AUTO);
        assertThat(CopyMode.parse(" Per-Range ")).isEqualTo(CopyMode.PER_RANGE);
        assertThat(CopyMode.parse("KERNEL")).isEqualTo(CopyMode.KERNEL);
        assertThat(CopyMode.BATCH.key()).isEqualTo("batch");
        assertThatThrownBy(() -> CopyMode.parse("dma"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("pega.cuda.copy-mode: 'dma' (expected: auto, batch, kernel or per-range)");
        assertThatThrownBy(() -> CopyMode.parse(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldRejectUnusableSettingsNamingTheKey() {
        assertThatThrownBy(() -> new CudaCopyConfig(CopyMode.AUTO, 0, 64L << 20, 0, 0, 1024))
                .hasMessageStartingWith("pega.cuda.kernel-max-ctas: 0");
        assertThatThrownBy(() -> new CudaCopyConfig(CopyMode.AUTO, 16, 4096, 0, 0, 1024))
                .hasMessageStartingWith("pega.cuda.kernel-max-launch-bytes: 4096");
        assertThatThrownBy(() -> new CudaCopyConfig(CopyMode.AUTO, 16, 64L << 20, -1, 0, 1024))
                .hasMessageStartingWith("pega.cuda.kernel-below: -1");
        assertThatThrownBy(() -> new CudaCopyConfig(CopyMode.AUTO, 16, 64L << 20, 0, -1, 1024))
                .hasMessageStartingWith("pega.cuda.serialize-below: -1");
        assertThatThrownBy(() -> new CudaCopyConfig(CopyMode.AUTO, 16, 64L << 20, 0, 0, 0))
                .hasMessageStartingWith("pega.cuda.batch-max-ranges: 0");
        assertThatThrownBy(() -> new CudaCopyConfig(null, 16, 64L << 20, 0, 0, 1))
                .hasMessageStartingWith("pega.cuda.copy-mode: null");
        assertThat(CudaCopyConfig.defaults().kernelMaxCtas()).isEqualTo(16);
        assertThat(CudaCopyConfig.defaults().kernelMaxLaunchBytes()).isEqualTo(64L << 20);
        assertThat(CudaCopyConfig.defaults().batchMaxRanges()).isEqualTo(256);
    }
}
