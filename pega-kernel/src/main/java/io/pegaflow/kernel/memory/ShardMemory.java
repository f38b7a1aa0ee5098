package io.pegaflow.kernel.memory;

/**
 * Where a pool's shards get their pages when the pool does not map them itself: memory another component allocates
 * and owns, such as the transfer engine's UCX context, whose shared-memory segments peers on the same host can read
 * directly, which they cannot do with the pool's private anonymous mappings. The pool binds it to its NUMA node,
 * pre-touches it and hands it back once, through {@link Mapping#release()}, when it unmaps.
 */
public interface ShardMemory {

    /**
     * Allocates at least {@code bytes}, untouched (the pool binds it to a NUMA node before the first page is faulted).
     *
     * @param name the shard's name, for log lines
     * @throws RuntimeException when nothing can be allocated; nothing stays allocated then
     */
    Mapping allocate(long bytes, String name);

    /** What the pool's startup line calls these pages. */
    String describe();

    /** One allocation, owned by the pool from {@link #allocate} until {@link #release()}. */
    interface Mapping {
        long address();

        long lengthBytes();

        /** Frees the memory. Called once, when nothing in the pool uses it any more. */
        void release();
    }
}
