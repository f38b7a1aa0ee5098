package io.pegaflow.core.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SmallFloatTest {

    @Test
    void shouldMapSizesBelowEightToThemselves() {
        for (int size = 0; size < 8; size++) {
            assertThat(SmallFloat.binRoundDown(size)).isEqualTo(size);
            assertThat(SmallFloat.binRoundUp(size)).isEqualTo(size);
            assertThat(SmallFloat.binLowerBound(size)).isEqualTo(size);
        }
    }

    @ParameterizedTest(name = "size {0} -> down {1}, up {2}")
    @CsvSource({
        "8,    8,  8",
        "15,   15, 15",
        "16,   16, 16",
        "17,   16, 17",
        "18,   17, 17",
        "31,   23, 24",
        "960,  63, 63",
        "1000, 63, 64",
        "4294967295, 239, 240"
    })
    void shouldRoundDownOnInsertAndUpOnAllocate(long size, int down, int up) {
        assertThat(SmallFloat.binRoundDown(size)).isEqualTo(down);
        assertThat(SmallFloat.binRoundUp(size)).isEqualTo(up);
    }

    @Test
    void shouldBoundEveryBinFromBelowAndFitEveryRequestFromAbove() {
        long[] sizes = {8, 9, 23, 24, 100, 511, 512, 513, 65_535, 1_000_003, 0xFFFF_FFFFL};
        for (long size : sizes) {
            assertThat(SmallFloat.binLowerBound(SmallFloat.binRoundDown(size)))
                    .as("filed under a bin not above %d", size)
                    .isLessThanOrEqualTo(size);
            assertThat(SmallFloat.binLowerBound(SmallFloat.binRoundUp(size)))
                    .as("request %d looks where every region fits", size)
                    .isGreaterThanOrEqualTo(size);
        }
    }

    @Test
    void shouldBeExactForSizesWithThreeSignificantBits() {
        for (int bin = 0; bin < 240; bin++) {
            long size = SmallFloat.binLowerBound(bin);
            assertThat(SmallFloat.binRoundDown(size)).isEqualTo(bin);
            assertThat(SmallFloat.binRoundUp(size)).isEqualTo(bin);
        }
    }
}
