package io.pegaflow.transfer.ucx;

import io.pegaflow.kernel.memory.MemoryRegionInfo;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferEngineContract;
import java.util.List;
import org.junit.jupiter.api.Timeout;

/**
 * The contract on UCX over shared memory, the single-host fast path. Shared-memory transports have no peer failure
 * detection and need no target progress, so the two peer-failure cases do not apply (they skip with a message).
 */
@Timeout(180)
class UcxShmTransferEngineTest extends TransferEngineContract {

    static TransferConfig config(int lanes) {
        return TransferConfig.of("lo", lanes).withTransports("shm,self");
    }

    @Override
    protected TransferEngine open(int lanes, List<MemoryRegionInfo> regions) {
        return UcxTransferEngine.open(config(lanes), regions, clock);
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
