package io.pegaflow.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.kernel.plan.MergeRule;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class TransferBatchTest {

    @Test
    void shouldKeepEveryRangeAsItsOwnOperationByDefault() {
        TransferBatch b = TransferBatch.get(2).add(0x1000, 0x9000, 0x100).add(0x1100, 0x9100, 0x100);
        assertThat(b.size()).isEqualTo(2);
        assertThat(b.localAddress(1)).isEqualTo(0x1100);
        assertThat(b.remoteAddress(1)).isEqualTo(0x9100);
        assertThat(b.totalBytes()).isEqualTo(0x200);
    }

    @Test
    void shouldMergeContiguousRangesWithinTheRuleInBothDirections() {
        for (TransferBatch b : new TransferBatch[] {
            TransferBatch.get(4, MergeRule.upTo(0x200)), TransferBatch.put(4, MergeRule.upTo(0x200))
        }) {
            b.add(0x1000, 0x9000, 0x100).add(0x1100, 0x9100, 0x100).add(0x1200, 0x9200, 0x100);
            assertThat(b.size()).as(b.direction().name()).isEqualTo(2);
            assertThat(b.lengthBytes(0)).isEqualTo(0x200);
            assertThat(b.localAddress(0)).isEqualTo(0x1000);
            assertThat(b.remoteAddress(0)).isEqualTo(0x9000);
            assertThat(b.localAddress(1)).isEqualTo(0x1200);
            assertThat(b.remoteAddress(1)).isEqualTo(0x9200);
        }
    }

    @Test
    void shouldRefuseAnEmptyRange() {
        assertThatThrownBy(() -> TransferBatch.put(1).add(1, 2, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("operation 0 has length 0");
    }
}
