package io.pegaflow.node;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.tier.BackingTier;
import io.pegaflow.core.tier.ReclaimingAllocator;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A tier the node lends the engine's tier chain but keeps owning: the engine closes the tiers it was given, and this
 * view's close does nothing, so the node's own close is the tier's one close. The remote tier needs this because it
 * must stop before the transfer engine it reads through closes, and that closes before the engine (whose pool the
 * transfer engine registered).
 */
final class LentTier implements BackingTier {
    private final BackingTier owned;

    LentTier(BackingTier owned) {
        this.owned = owned;
    }

    @Override
    public String tierName() {
        return owned.tierName();
    }

    @Override
    public long requiredHostAlignmentBytes() {
        return owned.requiredHostAlignmentBytes();
    }

    @Override
    public CompletableFuture<List<SealedBlock>> fetchPrefix(List<BlockKey> keys, ReclaimingAllocator memory) {
        return owned.fetchPrefix(keys, memory);
    }

    @Override
    public boolean waitsForPeers() {
        return owned.waitsForPeers();
    }

    /** The owner closes the tier; the engine's close of its chain leaves it alone. */
    @Override
    public void close() {}
}
