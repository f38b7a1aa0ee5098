package io.pegaflow.core.instance;

/**
 * Upper bounds on the sizes a registration may declare. The wire carries them as 32- or 64-bit integers, and the
 * engine sizes arrays by them (a block holds {@code num_layers × tp_size} slots), so an absurd value must be refused at
 * the door rather than discovered as an {@link OutOfMemoryError} on the sealing thread or an overflowed slot count.
 * Each bound is far above any deployed model: the largest tensor-parallel groups are 64 GPUs, the deepest models a
 * few hundred layers.
 */
public final class InstanceLimits {
    /** Largest {@code tp_size}. */
    public static final long MAX_TP_SIZE = 1024;

    /** Largest {@code world_size}. */
    public static final long MAX_WORLD_SIZE = 1 << 16;

    /** Largest {@code num_layers}, and the most distinct layer names one instance may register. */
    public static final long MAX_NUM_LAYERS = 4096;

    /** Largest {@code num_layers × tp_size}: the slots of one block. */
    public static final long MAX_SLOTS_PER_BLOCK = 1 << 16;

    private InstanceLimits() {}
}
