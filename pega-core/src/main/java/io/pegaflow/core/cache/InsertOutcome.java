package io.pegaflow.core.cache;

/** What {@link BlockCache#insert} did with a sealed block. */
public enum InsertOutcome {
    /** The block is now resident; the cache owns the reference it was given. */
    INSERTED,
    /** A block with the same key was already resident and is kept (content addressing); the caller keeps its ref. */
    ALREADY_EXISTS,
    /** The admission policy turned it away; the caller keeps its reference. */
    REJECTED
}
