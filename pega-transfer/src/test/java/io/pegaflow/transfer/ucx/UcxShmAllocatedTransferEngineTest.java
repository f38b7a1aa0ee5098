package io.pegaflow.transfer.ucx;

import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.kernel.memory.MemoryRegionInfo;
import io.pegaflow.transfer.TransferEngine;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link UcxShmTransferEngineTest}'s contract with the pool allocated by UCX ({@link UcxSharedMemory}), as pega-server
 * runs it over shared-memory transports: the initiator copies straight out of the target's attached segment.
 */
class UcxShmAllocatedTransferEngineTest extends UcxShmTransferEngineTest {
    private final List<UcxSharedMemory> memories = new ArrayList<>();

    @Override
    protected PinnedMemoryPool newPool(int lanes, long poolBytes) {
        UcxSharedMemory memory = UcxSharedMemory.open(config(lanes));
        memories.add(memory);
        closeLater(memory);
        return PinnedMemoryPool.create(PoolConfig.of(poolBytes), memory);
    }

    @Override
    protected TransferEngine open(int lanes, List<MemoryRegionInfo> regions) {
        return UcxTransferEngine.open(config(lanes), memories.get(memories.size() - 1), regions, clock);
    }
}
