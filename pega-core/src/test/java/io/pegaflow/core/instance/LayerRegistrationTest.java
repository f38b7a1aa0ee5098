package io.pegaflow.core.instance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.device.LayerMemory;
import io.pegaflow.core.error.EngineException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Layout validation and host sizes, as the reference's RegisterContextBatch has them. */
@Timeout(30)
class LayerRegistrationTest {
    private static final long BASE = 0x7000_0000_0000L;

    private record FakeMemory(long baseAddress, long sizeBytes) implements LayerMemory {
        @Override
        public void close() {}
    }

    private static LayerRegistration register(long size, long n, long b, long k, long g, long alignment) {
        return LayerRegistration.validate("L", 3, new FakeMemory(BASE, size), n, b, k, g, alignment);
    }

    private static void assertInvalid(long ptr, long size, long n, long b, long k, long g, String reason) {
        assertThatThrownBy(() -> LayerRegistration.validate("L", 0, new FakeMemory(ptr, size), n, b, k, g, 1))
                .isInstanceOfSatisfying(EngineException.class, e -> {
                    assertThat(e.kind()).isEqualTo(EngineException.Kind.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).isEqualTo("invalid argument: layer L: " + reason);
                });
    }

    @Test
    void shouldRejectWhatTheReferenceRejects() {
        assertInvalid(0, 4096, 4, 1024, 0, 1, "data_ptr must not be null");
        assertInvalid(BASE, 0, 4, 1024, 0, 1, "size_bytes must be > 0");
        assertInvalid(BASE, 4096, 0, 1024, 0, 1, "bytes_per_block, num_blocks, and segments must be non-zero");
        assertInvalid(BASE, 4096, 4, 0, 0, 1, "bytes_per_block, num_blocks, and segments must be non-zero");
        assertInvalid(BASE, 4096, 4, 1024, 0, 0, "bytes_per_block, num_blocks, and segments must be non-zero");
        assertInvalid(BASE, 8192, 4, 1024, 0, 2, "kv_stride_bytes must be > 0 when segments > 1");
        assertInvalid(BASE, 4095, 4, 1024, 0, 1, "registered memory too small: need 4096 bytes, got 4095");
    }

    @Test
    void shouldAcceptTheReferenceKvFirstExampleExactlyAtItsSize() {
        // (2, 6, 64, 4, 8) fp16: N=6, B=4096, K=24576, G=2; end = 5·4096 + 24576 + 4096 = 49152.
        LayerRegistration layer = register(49152, 6, 4096, 24576, 2, 1);

        assertThat(layer.isSplit()).isTrue();
        assertThat(layer.deviceRange(5, 1)).isEqualTo(BASE + 5 * 4096 + 24576);
        assertInvalid(BASE, 49151, 6, 4096, 24576, 2, "registered memory too small: need 49152 bytes, got 49151");
    }

    @Test
    void shouldRejectInterleavedKvLayoutAsTooSmall() {
        // Logical (2, nb, ...) whose strides interleave K and V per block: K = B, but N·B·2 bytes do not fit N·B.
        assertInvalid(BASE, 4 * 1024, 4, 1024, 4096, 2, "registered memory too small: need 8192 bytes, got 4096");
    }

    @Test
    void shouldRejectLayoutsThatOverflow64Bits() {
        assertInvalid(
                BASE,
                Long.MAX_VALUE,
                Long.MAX_VALUE,
                Long.MAX_VALUE,
                0,
                1,
                "registered memory too small: layout overflows 64-bit offsets");
    }

    @Test
    void shouldTreatEqualStrideAsOneContiguousRange() {
        LayerRegistration layer = register(2048, 1, 1024, 1024, 2, 1);

        assertThat(layer.isSplit()).isFalse();
        assertThat(layer.copySegmentBytes()).isEqualTo(2048);
        assertThat(layer.hostSegmentBytes()).isEqualTo(2048);
    }

    @Test
    void shouldPadHostSegmentsForDirectIo() {
        LayerRegistration single = register(8848L * 4, 4, 8848, 0, 1, 512);
        LayerRegistration split = register(8848L * 4 + 65536, 4, 8848, 65536, 2, 512);
        LayerRegistration pair = register(8848L * 2, 1, 8848, 8848, 2, 512);

        assertThat(single.hostSegmentBytes()).isEqualTo(9216);
        assertThat(single.copySegmentBytes()).isEqualTo(8848);
        assertThat(split.hostSegmentBytes()).isEqualTo(9216);
        assertThat(split.copySegmentBytes()).isEqualTo(8848);
        assertThat(pair.hostSegmentBytes()).isEqualTo(2 * 9216);
        assertThat(pair.copySegmentBytes()).isEqualTo(2 * 8848);
    }

    @Test
    void shouldBoundBlocksByTheirCount() {
        LayerRegistration layer = register(4096, 4, 1024, 0, 1, 1);

        assertThat(layer.containsBlock(0)).isTrue();
        assertThat(layer.containsBlock(3)).isTrue();
        assertThat(layer.containsBlock(4)).isFalse();
        assertThat(layer.containsBlock(-1)).isFalse();
        assertThat(layer.layerId()).isEqualTo(3);
    }

    @Test
    void shouldRejectTwoSegmentsWhoseStrideOverlapsTheKSegment() {
        // The reference validated end = (N-1)·B + K + B here (8 blocks of 4096 with K = 1024: 33792 bytes) and then
        // copied 2·B = 8192 bytes per block, 3072 bytes past the end of a 33792-byte tensor.
        assertInvalid(
                BASE,
                33792,
                8,
                4096,
                1024,
                2,
                "kv_stride_bytes 1024 overlaps the K segment: with 2 segments it must be >= bytes_per_block 4096");
        assertInvalid(
                BASE,
                1 << 20,
                8,
                4096,
                4095,
                2,
                "kv_stride_bytes 4095 overlaps the K segment: with 2 segments it must be >= bytes_per_block 4096");
    }

    @Test
    void shouldValidateEqualStrideWithTheLengthReallyCopied() {
        // K == B copies G·B = 2·B from each block start: the last block ends at (N+1)·B.
        assertInvalid(
                BASE, 4 * 1024 + 1023, 4, 1024, 1024, 2, "registered memory too small: need 5120 bytes, got 5119");
        assertThat(register(5 * 1024, 4, 1024, 1024, 2, 1).copySegmentBytes()).isEqualTo(2048);
    }

    @Test
    void shouldRefuseARangeOutsideTheRegistrationWhenAPlanIsBuilt() {
        LayerRegistration split = register(49152, 6, 4096, 24576, 2, 1);
        LayerRegistration contiguous = register(4096, 4, 1024, 0, 1, 1);

        assertThat(contiguous.deviceRange(3, 0)).isEqualTo(BASE + 3 * 1024);
        for (long[] bad : new long[][] {{6, 0}, {-1, 0}, {0, 2}, {0, -1}}) {
            assertThatThrownBy(() -> split.deviceRange(bad[0], (int) bad[1]))
                    .isInstanceOfSatisfying(EngineException.class, e -> {
                        assertThat(e.kind()).isEqualTo(EngineException.Kind.INTERNAL);
                        assertThat(e.getMessage())
                                .isEqualTo("storage error: layer L: transfer exceeds registered memory");
                    });
        }
        assertThatThrownBy(() -> contiguous.deviceRange(0, 1)).isInstanceOf(EngineException.class);
        assertThatThrownBy(() -> contiguous.deviceRange(4, 0)).isInstanceOf(EngineException.class);
    }
}
