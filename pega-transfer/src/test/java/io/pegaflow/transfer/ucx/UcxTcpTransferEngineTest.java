package io.pegaflow.transfer.ucx;

import io.pegaflow.kernel.memory.MemoryRegionInfo;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferEngineContract;
import java.util.List;
import org.junit.jupiter.api.Timeout;

/** The contract on UCX over TCP on the loopback interface, how CI runs without an RDMA NIC. */
@Timeout(180)
class UcxTcpTransferEngineTest extends TransferEngineContract {

    @Override
    protected TransferEngine open(int lanes, List<MemoryRegionInfo> regions) {
        return UcxTransferEngine.open(TransferConfig.of("lo", lanes).withTransports("tcp"), regions, clock);
    }

    @Override
    protected Stoppable stoppablePeer(int lanes, List<MemoryRegionInfo> regions) {
        return UcxContractSupport.stoppablePeer("lo", "tcp", lanes, regions);
    }
}
