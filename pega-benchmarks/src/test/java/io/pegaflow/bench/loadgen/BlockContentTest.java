package io.pegaflow.bench.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.testkit.ShmDeviceMemory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class BlockContentTest {

    @Test
    void shouldDeriveHashesFromPrefixAndPositionOnly() {
        BlockContent a = new BlockContent(42, 65536, 1, 32);
        BlockContent b = new BlockContent(42, 65536, 1, 32);
        BlockContent otherLayout = new BlockContent(42, 16384, 1, 32);

        assertThat(a.hash(7, 3)).hasSize(32).isEqualTo(b.hash(7, 3));
        assertThat(a.hash(7, 3)).isNotEqualTo(a.hash(7, 4)).isNotEqualTo(a.hash(8, 3));
        assertThat(a.hash(7, 3)).isNotEqualTo(otherLayout.hash(7, 3));
        assertThat(new BlockContent(1, 1, 1, 13).hash(0, 0)).hasSize(13);
    }

    @Test
    void shouldDetectAWrongBlockAShiftAndATruncation() {
        BlockContent c = new BlockContent(1, 1000, 1, 32);
        long base = c.contentBase(3, 5, 0);
        try (ShmDeviceMemory shm = ShmDeviceMemory.create(4096)) {
            long at = shm.address();
            BlockContent.fill(at, 1001, base);
            assertThat(BlockContent.firstMismatch(at, 1001, base)).isEqualTo(-1);
            assertThat(BlockContent.firstMismatch(at, 1001, c.contentBase(3, 6, 0)))
                    .isZero();
            assertThat(BlockContent.firstMismatch(at + 8, 993, base)).isZero();

            shm.fill(1000, 1, (byte) 0);
            assertThat(BlockContent.firstMismatch(at, 1001, base)).isEqualTo(1000);
        }
    }
}
