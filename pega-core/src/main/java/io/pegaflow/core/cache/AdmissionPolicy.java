package io.pegaflow.core.cache;

import io.pegaflow.core.block.BlockKey;
import org.jspecify.annotations.Nullable;

/**
 * Decides whether a new block may enter the RAM index, and learns from hits. Called under the cache lock, so an
 * implementation needs no synchronisation of its own and must be fast.
 */
public interface AdmissionPolicy {

    /** Records a hit on a resident key. */
    void recordAccess(BlockKey key);

    /**
     * Whether {@code candidate} should be admitted when {@code victim} (the current LRU head, or null when the index
     * is empty) would be the next to go.
     */
    boolean admit(BlockKey candidate, @Nullable BlockKey victim);

    /** Plain LRU: admits everything. */
    AdmissionPolicy ALWAYS = new AdmissionPolicy() {
        @Override
        public void recordAccess(BlockKey key) {}

        @Override
        public boolean admit(BlockKey candidate, @Nullable BlockKey victim) {
            return true;
        }
    };
}
