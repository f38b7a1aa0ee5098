package io.pegaflow.core.cache;

import io.pegaflow.core.block.BlockKey;

/**
 * A 4-bit count-min sketch with periodic halving: the frequency history behind TinyLFU admission (Einziger, Friedman,
 * Manes, "TinyLFU: A Highly Efficient Cache Admission Policy", ACM ToS 2017), laid out like Caffeine's
 * {@code FrequencySketch}.
 *
 * <pre>
 *   table: long[2^k], each long = 16 counters of 4 bits
 *   increment(key): for each of 4 rows, counter (row hash -> long, nibble) += 1, saturating at 15
 *   frequency(key): minimum of the 4 counters (count-min)
 *   every sampleSize increments: every counter >>= 1 (aging, so old popularity fades)
 * </pre>
 *
 * Width is the next power of two at or above the expected number of distinct resident blocks, so the error stays
 * small for the keys that matter; counters saturate at 15 because admission only compares "rarely" with "often".
 * Caffeine's sketch itself is package-private, which is why this is a small re-implementation (see
 * {@code docs/decisions/0004-tinylfu-admission.md}).
 *
 * <p>Not thread-safe: the cache calls it under its lock.
 */
public final class TinyLfuSketch {
    private static final long[] SEEDS = {
        0xc3a5c85c97cb3127L, 0xb492b66fbe98f273L, 0x9ae16a3b2f90404fL, 0xcbf29ce484222325L
    };
    private static final long RESET_MASK = 0x7777_7777_7777_7777L;

    private final long[] table;
    private final int tableMask;
    private final int sampleSize;
    private int size;

    /** @param expectedItems distinct keys the cache holds at once (clamped to [16, 2^26]) */
    public TinyLfuSketch(long expectedItems) {
        int items = (int) Math.max(16, Math.min(1L << 26, expectedItems));
        int length = Integer.highestOneBit(items - 1) << 1;
        this.table = new long[length];
        this.tableMask = length - 1;
        this.sampleSize = 10 * items;
    }

    /** Counts one occurrence of {@code key}. */
    public void increment(BlockKey key) {
        long hash = spread(key.hashCode());
        boolean added = false;
        for (int row = 0; row < 4; row++) {
            long h = rehash(hash, row);
            int index = (int) h & tableMask;
            int shift = (int) ((h >>> 40) & 15) << 2;
            long word = table[index];
            if (((word >>> shift) & 15) != 15) {
                table[index] = word + (1L << shift);
                added = true;
            }
        }
        if (added && ++size >= sampleSize) {
            reset();
        }
    }

    /** The estimated count of {@code key} since aging, 0 to 15. */
    public int frequency(BlockKey key) {
        long hash = spread(key.hashCode());
        int min = 15;
        for (int row = 0; row < 4; row++) {
            long h = rehash(hash, row);
            int shift = (int) ((h >>> 40) & 15) << 2;
            min = Math.min(min, (int) ((table[(int) h & tableMask] >>> shift) & 15));
        }
        return min;
    }

    /** Halves every counter. */
    void reset() {
        for (int i = 0; i < table.length; i++) {
            table[i] = (table[i] >>> 1) & RESET_MASK;
        }
        size /= 2;
    }

    int width() {
        return table.length;
    }

    private static long spread(int x) {
        long h = x * 0x9E3779B97F4A7C15L;
        return h ^ (h >>> 29);
    }

    private static long rehash(long hash, int row) {
        long h = (hash + SEEDS[row]) * SEEDS[row];
        return h ^ (h >>> 31);
    }
}
