package io.pegaflow.core.cache;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.memory.PinnedMemoryPool;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * TinyLFU admission in front of the RAM index's LRU order ({@code pega.cache.admission=tinylfu}): under memory
 * pressure a new block enters only if the sketch has seen it at least as often as the LRU victim, so a one-pass scan
 * over cold blocks cannot flush a hot working set.
 *
 * <ul>
 *   <li>Every hit ({@link #recordAccess}) and every insert attempt ({@link #admit}) counts in a
 *       {@link TinyLfuSketch}: a block that keeps being recomputed and saved builds up history and gets in.
 *   <li>Ties admit, as in the reference: a scan replaces older scan blocks, never hot ones.
 *   <li>Unlike the reference, admission applies only while the pool is under pressure: from the moment usage reaches
 *       90 % until it falls below 50 % (hysteresis, because one eviction batch frees a large share of a small pool).
 *       With room to spare every block is admitted, the role W-TinyLFU's admission window plays. The reference
 *       compared against the LRU head always, so a hot head could turn new blocks away from an empty pool, which is
 *       why it shipped the policy off by default.
 * </ul>
 *
 * <p>Called under the cache lock; not thread-safe on its own. See {@code docs/decisions/0004-tinylfu-admission.md}.
 */
public final class TinyLfuAdmission implements AdmissionPolicy {
    /** Pool usage from which admission compares frequencies. */
    public static final double PRESSURE_ENTER = 0.9;
    /** Pool usage below which it admits everything again. */
    public static final double PRESSURE_LEAVE = 0.5;
    /** Block size assumed for sizing the sketch when no hint is configured. */
    public static final long DEFAULT_BLOCK_BYTES = 64 * 1024;

    private final TinyLfuSketch sketch;
    private final BooleanSupplier underPressure;

    public TinyLfuAdmission(long expectedItems, BooleanSupplier underPressure) {
        this.sketch = new TinyLfuSketch(expectedItems);
        this.underPressure = underPressure;
    }

    /**
     * A policy sized for a pool: the sketch tracks {@code capacity / blockBytes} keys, where {@code blockBytes} is
     * the pool's value-size hint or {@link #DEFAULT_BLOCK_BYTES}; pressure starts at {@link #PRESSURE_ENTER} of the
     * pool used and ends below {@link #PRESSURE_LEAVE}.
     */
    public static TinyLfuAdmission forPool(PinnedMemoryPool pool) {
        long hint = pool.config().hintValueSizeBytes();
        long blockBytes = hint > 0 ? hint : DEFAULT_BLOCK_BYTES;
        long capacity = pool.capacityBytes();
        return new TinyLfuAdmission(
                Math.max(1, capacity / blockBytes),
                new Hysteresis(
                        pool::usedBytes, (long) (capacity * PRESSURE_ENTER), (long) (capacity * PRESSURE_LEAVE)));
    }

    /** True from the moment a level reaches {@code enter} until it falls below {@code leave}. */
    static final class Hysteresis implements BooleanSupplier {
        private final java.util.function.LongSupplier level;
        private final long enter;
        private final long leave;
        private volatile boolean on;

        Hysteresis(java.util.function.LongSupplier level, long enter, long leave) {
            this.level = level;
            this.enter = enter;
            this.leave = leave;
        }

        @Override
        public boolean getAsBoolean() {
            long now = level.getAsLong();
            if (on) {
                on = now >= leave;
            } else {
                on = now >= enter;
            }
            return on;
        }
    }

    @Override
    public void recordAccess(BlockKey key) {
        sketch.increment(key);
    }

    @Override
    public boolean admit(BlockKey candidate, @Nullable BlockKey victim) {
        sketch.increment(candidate);
        if (victim == null || !underPressure.getAsBoolean()) {
            return true;
        }
        return sketch.frequency(candidate) >= sketch.frequency(victim);
    }

    /** The estimated frequency of a key (tests and diagnostics). */
    public int frequency(BlockKey key) {
        return sketch.frequency(key);
    }
}
