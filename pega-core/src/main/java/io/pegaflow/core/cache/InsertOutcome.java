package io.pegaflow.core.cache;

/** What {@link BlockCache#insertAll} did with a sealed block. */
public enum InsertOutcome {
    /** The block is now resident; the cache owns the reference it was given. */
    INSERTED,
    /** A block with the same key was already resident and is kept (content addressing); the caller keeps its ref. */
    ALREADY_EXISTS,
    /**
     * The policy turned it away (the {@code tinylfu} sketch, or {@code caffeine}'s W-TinyLFU evicting the newcomer at
     * once); the caller keeps its reference.
     */
    REJECTED
}
