package io.pegaflow.core.engine;

import java.util.List;

/**
 * Told which blocks became findable on this node and which stopped being findable, so that a cluster index (the
 * metaserver) can route other nodes here.
 *
 * <p>Called from the engine's sealing thread and from eviction paths: an implementation must only enqueue (bounded,
 * dropping and counting when full) and return at once. It must never block, throw or call back into the engine.
 * Hash arrays are owned by the engine and must not be modified.
 */
public interface BlockIndexListener {

    /** Blocks of {@code namespace} sealed into the RAM cache. */
    void onSealed(String namespace, List<byte[]> hashes);

    /** Blocks of {@code namespace} removed from the RAM cache. */
    void onEvicted(String namespace, List<byte[]> hashes);

    /**
     * Every block currently resident, for re-announcing after the cluster index lost its state (a metaserver restart).
     * The engine calls {@code sink.onSealed} in batches from the calling thread.
     */
    interface ResidentBlocks {
        void forEachResident(int batchSize, BlockIndexListener sink);
    }

    BlockIndexListener NONE = new BlockIndexListener() {
        @Override
        public void onSealed(String namespace, List<byte[]> hashes) {}

        @Override
        public void onEvicted(String namespace, List<byte[]> hashes) {}
    };
}
