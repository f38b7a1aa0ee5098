package io.pegaflow.transfer.ucx;

import io.pegaflow.core.memory.MemoryRegionInfo;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferEngineContract;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Timeout;

/**
 * The contract over shared memory with the pool allocated by UCX ({@link UcxSharedMemory}), as pega-server runs it: the
 * initiator copies straight out of the target's attached segment. The peer-failure cases skip as for
 * {@link UcxShmTransferEngineTest}.
 */
@Timeout(180)
class UcxShmAllocatedTransferEngineTest extends TransferEngineContract {
    private final List<UcxSharedMemory> memories = new ArrayList<>();

    private static TransferConfig config(int lanes) {
        return TransferConfig.of("lo", lanes).withTransports("shm,self");
    }

    @Override
    protected PinnedMemoryPool newPool(int lanes, long poolBytes) {
        UcxSharedMemory memory = UcxSharedMemory.open(config(lanes));
        memories.add(memory);
        closeLater(memory);
        return PinnedMemoryPool.create(PoolConfig.of(poolBytes), memory);
    }

    @Override
    protected TransferEngine open(int lanes, List<MemoryRegionInfo> regions) {
        UcxSharedMemory memory = memories.get(memories.size() - 1);
        return UcxTransferEngine.open(config(lanes), memory, regions, clock);
    }

    @Override
    protected Stoppable stoppablePeer(int lanes, List<MemoryRegionInfo> regions) {
        return null;
    }

    @Override
    protected boolean detectsPeerClose() {
        return false;
    }
}
