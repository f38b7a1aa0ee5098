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

    /**
     * Longest instance id, namespace or layer name, in characters. Registrations are kept in memory, journaled and
     * named in log lines, so a 60 MiB namespace once filled the heap and a journal that no restart could read; real
     * ones are tens of characters (a model's layer path, a hash of the model's settings).
     */
    public static final int MAX_NAME_CHARS = 1024;

    private InstanceLimits() {}

    /**
     * Refuses a name longer than {@link #MAX_NAME_CHARS}.
     *
     * @throws io.pegaflow.core.error.EngineException INVALID_ARGUMENT naming the field and the bound
     */
    public static void requireName(String field, String value) {
        if (value.length() > MAX_NAME_CHARS) {
            throw io.pegaflow.core.error.EngineException.badRequest(field + " is " + value.length()
                    + " characters long, more than the supported maximum of " + MAX_NAME_CHARS);
        }
    }
}
