package io.pegaflow.bench.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class ZipfTest {

    @Test
    void shouldFollowTheHarmonicWeights() {
        Zipf zipf = new Zipf(4, 1.0);
        double h = 1 + 1 / 2.0 + 1 / 3.0 + 1 / 4.0;

        for (int k = 0; k < 4; k++) {
            assertThat(zipf.probability(k)).isCloseTo(1 / ((k + 1) * h), within(1e-12));
        }
    }

    @Test
    void shouldMapTheUnitIntervalOntoRanksInOrder() {
        Zipf zipf = new Zipf(4, 1.0);

        assertThat(zipf.rankOf(0.0)).isZero();
        assertThat(zipf.rankOf(zipf.probability(0) - 1e-9)).isZero();
        assertThat(zipf.rankOf(zipf.probability(0))).isEqualTo(1);
        assertThat(zipf.rankOf(0.999_999_999)).isEqualTo(3);
    }

    @Test
    void shouldSampleCloseToTheLawAndStayInRange() {
        Zipf zipf = new Zipf(100, 1.1);
        SplittableRandom random = new SplittableRandom(7);
        int[] counts = new int[100];
        int n = 200_000;
        for (int i = 0; i < n; i++) {
            counts[zipf.sample(random)]++;
        }

        for (int k : new int[] {0, 1, 9, 99}) {
            double expected = zipf.probability(k) * n;
            assertThat((double) counts[k]).isCloseTo(expected, within(5 * Math.sqrt(expected) + 5));
        }
        assertThat(counts[0]).isGreaterThan(counts[1]).isGreaterThan(counts[9]);
    }

    @Test
    void shouldBeUniformAtExponentZero() {
        Zipf zipf = new Zipf(10, 0);

        for (int k = 0; k < 10; k++) {
            assertThat(zipf.probability(k)).isCloseTo(0.1, within(1e-12));
        }
    }

    @Test
    void shouldRejectNonsense() {
        assertThatThrownBy(() -> new Zipf(0, 1)).hasMessageContaining("at least one rank");
        assertThatThrownBy(() -> new Zipf(3, -1)).hasMessageContaining("exponent");
        assertThatThrownBy(() -> new Zipf(3, Double.NaN)).hasMessageContaining("exponent");
    }
}
