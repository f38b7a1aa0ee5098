package io.pegaflow.core.tier;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import java.util.List;

/** Offered every block that entered the RAM index (the SSD tier copies it out); must only enqueue. */
public interface SealedBlockSpill {
    /** The spill takes its own references with {@link SealedBlock#tryRetain()} if it keeps a block. */
    void offer(List<BlockKey> keys, List<SealedBlock> blocks);

    SealedBlockSpill NONE = (keys, blocks) -> {};
}
