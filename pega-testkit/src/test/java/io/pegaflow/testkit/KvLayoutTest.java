package io.pegaflow.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class KvLayoutTest {

    @Test
    void shouldMatchTheKvFirstWorkedExample() {
        // (2, 6, 64, 4, 8) fp16
        KvLayout layout = KvLayout.kvFirst(6, 64, 4, 8, 2);

        assertThat(layout.numBlocks()).isEqualTo(6);
        assertThat(layout.bytesPerBlock()).isEqualTo(4096);
        assertThat(layout.kvStrideBytes()).isEqualTo(24576);
        assertThat(layout.segments()).isEqualTo(2);
        assertThat(layout.tensorBytes()).isEqualTo(2L * 6 * 64 * 4 * 8 * 2);
        assertThat(layout.isSplit()).isTrue();
        assertThat(layout.requiredBytes()).isEqualTo(layout.tensorBytes());
        assertThat(layout.segmentOffset(5, 1)).isEqualTo(5 * 4096 + 24576);
        assertThat(layout.rangesPerBlock()).isEqualTo(2);
        assertThat(layout.rangeBytes()).isEqualTo(4096);
        assertThat(layout.rangeOffset(3, 1)).isEqualTo(3 * 4096 + 24576);
    }

    @Test
    void shouldMatchTheCrossLayerWorkedExample() {
        // (6, 93, 2, 64, 1, 128) fp16
        KvLayout layout = KvLayout.crossLayer(6, 93, 64, 1, 128, 2);

        assertThat(layout.numBlocks()).isEqualTo(6);
        assertThat(layout.bytesPerBlock()).isEqualTo(3_047_424);
        assertThat(layout.kvStrideBytes()).isZero();
        assertThat(layout.segments()).isEqualTo(1);
        assertThat(layout.tensorBytes()).isEqualTo(6L * 3_047_424);
        assertThat(layout.isSplit()).isFalse();
        assertThat(KvLayout.crossLayerName(0, 1)).isEqualTo("ALL_LAYERS");
        assertThat(KvLayout.crossLayerName(1, 2)).isEqualTo("ALL_LAYERS_pp1");
    }

    @Test
    void shouldDescribeBlocksFirstAsOneContiguousSegment() {
        // (10, 2, 16, 8, 128) bf16
        KvLayout layout = KvLayout.blocksFirst(10, 16, 8, 128, 2);

        assertThat(layout).isEqualTo(new KvLayout(10, 2 * 16 * 8 * 128 * 2, 0, 1, 10L * 65536));
        assertThat(layout.rangesPerBlock()).isEqualTo(1);
        assertThat(layout.rangeBytes()).isEqualTo(65536);
        assertThat(layout.requiredBytes()).isEqualTo(layout.tensorBytes());
    }

    @Test
    void shouldGroupMlaPhysicalBlocksIntoSchedulerBlocks() {
        // (8, 64, 576) bf16 under a 128-token scheduler block: r = 2
        KvLayout layout = KvLayout.mla(8, 64, 576, 2, 128);

        assertThat(layout.numBlocks()).isEqualTo(4);
        assertThat(layout.bytesPerBlock()).isEqualTo(2L * 64 * 576 * 2);
        assertThat(layout.segments()).isEqualTo(1);
        assertThat(layout.tensorBytes()).isEqualTo(8L * 64 * 576 * 2);
        assertThat(layout.requiredBytes()).isEqualTo(layout.tensorBytes());
        assertThat(KvLayout.mla(8, 64, 576, 2, 64).numBlocks()).isEqualTo(8);
    }

    @Test
    void shouldRejectMlaSplitsThatDoNotDivide() {
        assertThatThrownBy(() -> KvLayout.mla(8, 48, 576, 2, 128)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> KvLayout.mla(7, 64, 576, 2, 128)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldTreatKvStrideNotAboveBytesPerBlockAsContiguous() {
        KvLayout layout = new KvLayout(1, 1024, 1024, 2, 2048);

        assertThat(layout.isSplit()).isFalse();
        assertThat(layout.rangesPerBlock()).isEqualTo(1);
        assertThat(layout.rangeBytes()).isEqualTo(2048);
        assertThat(layout.requiredBytes()).isEqualTo(2048);
    }

    @Test
    void shouldDescribeTheReferenceHarnessLayout() {
        assertThat(ReferenceHarness.LAYOUT).isEqualTo(new KvLayout(4, 1024, 0, 1, 4096));
        assertThat(ReferenceHarness.LAYOUT.withTensorBytes(4095).requiredBytes())
                .isEqualTo(4096);
    }
}
