package io.pegaflow.core.device.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.pegaflow.kernel.plan.RangePlan;
import io.pegaflow.sys.cuda.CudaBatchCopy;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The arrays one plan's {@code cuMemcpyBatchAsync} calls read, and how the plan is split into calls. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class BatchDescriptorsTest {

    @Test
    void shouldWriteTheAttributeAndTheThreeArraysForEachDirection() {
        RangePlan plan = new RangePlan(3);
        plan.add(0x1000, 0x9000, 100);
        plan.add(0x5000, 0xa000, 200);
        plan.add(0x3001, 0xb003, 1L << 33); // misaligned and larger than 4 GiB: the batch takes it as it is
        for (RangePlan p : new RangePlan[] {plan, plan.reversed()}) {
            try (Memory m = new Memory(BatchDescriptors.bytesFor(p.size()))) {
                long base = Pointer.nativeValue(m);
                BatchDescriptors.write(p, CudaBatchCopy.FLAG_PREFER_OVERLAP_WITH_COMPUTE, base);
                assertThat(m.getInt(0)).isEqualTo(CudaBatchCopy.SRC_ACCESS_ORDER_STREAM);
                assertThat(m.getLong(4)).isZero();
                assertThat(m.getLong(12)).isZero();
                assertThat(m.getInt(20)).isEqualTo(CudaBatchCopy.FLAG_PREFER_OVERLAP_WITH_COMPUTE);
                assertThat(m.getLong(BatchDescriptors.attributeIndices(base) - base))
                        .isZero();
                for (int i = 0; i < 3; i++) {
                    long dst = m.getLong(BatchDescriptors.dsts(base) - base + 8L * i);
                    long src = m.getLong(BatchDescriptors.srcs(base, 3) - base + 8L * i);
                    assertThat(dst).isEqualTo(p.dstAddress(i));
                    assertThat(src).isEqualTo(p.srcAddress(i));
                    assertThat(m.getLong(BatchDescriptors.sizes(base, 3) - base + 8L * i))
                            .isEqualTo(p.lengthBytes(i));
                }
            }
        }
        assertThat(BatchDescriptors.bytesFor(3)).isEqualTo(32 + 3 * 24);
    }

    @Test
    void shouldSplitRangesIntoCallsOfAtMostTheLimit() {
        assertThat(BatchDescriptors.calls(0, 1024)).isZero();
        assertThat(BatchDescriptors.calls(1, 1024)).isEqualTo(1);
        assertThat(BatchDescriptors.calls(1024, 1024)).isEqualTo(1);
        assertThat(BatchDescriptors.calls(1025, 1024)).isEqualTo(2);
        assertThat(BatchDescriptors.callLength(1, 1025, 1024)).isEqualTo(1);
        assertThat(BatchDescriptors.callStart(1, 1024)).isEqualTo(1024);
        int total = 0;
        int n = 73_728; // 36 layers x 1024 blocks x K and V
        for (int c = 0; c < BatchDescriptors.calls(n, 1000); c++) {
            assertThat(BatchDescriptors.callStart(c, 1000)).isEqualTo(total);
            total += BatchDescriptors.callLength(c, n, 1000);
        }
        assertThat(total).isEqualTo(n);
    }
}
