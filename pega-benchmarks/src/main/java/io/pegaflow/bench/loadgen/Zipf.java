package io.pegaflow.bench.loadgen;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Zipf's law over ranks {@code 0..n-1}: rank {@code k} is drawn with probability proportional to
 * {@code 1 / (k + 1)^s}. {@code s = 0} is uniform; around 1 is the classic "a few prompts are very popular" shape of
 * shared system prompts and few-shot templates.
 *
 * <p>Sampling inverts a precomputed cumulative table by binary search: exact, O(log n) per draw, {@code 8·n} bytes.
 * Immutable and thread-safe; each thread brings its own random source.
 */
public final class Zipf {
    private final double[] cumulative;
    private final double exponent;

    public Zipf(int n, double exponent) {
        if (n < 1) {
            throw new IllegalArgumentException("zipf needs at least one rank, got " + n);
        }
        if (!(exponent >= 0) || Double.isInfinite(exponent)) {
            throw new IllegalArgumentException("zipf exponent must be a finite number >= 0, got " + exponent);
        }
        this.exponent = exponent;
        this.cumulative = new double[n];
        double sum = 0;
        for (int k = 0; k < n; k++) {
            sum += 1.0 / Math.pow(k + 1, exponent);
            cumulative[k] = sum;
        }
        for (int k = 0; k < n; k++) {
            cumulative[k] /= sum;
        }
        cumulative[n - 1] = 1.0;
    }

    int size() {
        return cumulative.length;
    }

    double exponent() {
        return exponent;
    }

    /** The probability of rank {@code k}. */
    double probability(int k) {
        return k == 0 ? cumulative[0] : cumulative[k] - cumulative[k - 1];
    }

    /** A rank drawn from {@code random}. */
    public int sample(SplittableRandom random) {
        return rankOf(random.nextDouble());
    }

    /** The rank whose cumulative interval contains {@code u} in [0, 1). */
    int rankOf(double u) {
        int i = Arrays.binarySearch(cumulative, u);
        // Exact hit on a boundary belongs to the next rank (intervals are [c(k-1), c(k))).
        int rank = i >= 0 ? i + 1 : -i - 1;
        return Math.min(rank, cumulative.length - 1);
    }
}
