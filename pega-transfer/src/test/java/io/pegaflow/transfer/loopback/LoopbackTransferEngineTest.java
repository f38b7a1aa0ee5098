package io.pegaflow.transfer.loopback;

import io.pegaflow.kernel.memory.MemoryRegionInfo;
import io.pegaflow.transfer.HandshakeDescriptor;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferEngineContract;
import java.util.List;
import org.junit.jupiter.api.Timeout;

/** The contract on the memcpy loopback. */
@Timeout(120)
class LoopbackTransferEngineTest extends TransferEngineContract {

    @Override
    protected TransferEngine open(int lanes, List<MemoryRegionInfo> regions) {
        return LoopbackTransferEngine.open(TransferConfig.of("loop0", lanes), regions, clock);
    }

    @Override
    protected Stoppable stoppablePeer(int lanes, List<MemoryRegionInfo> regions) {
        LoopbackTransferEngine.StoppablePeer peer =
                LoopbackTransferEngine.stoppablePeer(TransferConfig.of("loop0", lanes), regions);
        return new Stoppable() {
            @Override
            public HandshakeDescriptor descriptor() {
                return peer.descriptor();
            }

            @Override
            public void stop() {
                peer.stop();
            }

            @Override
            public void close() {
                peer.close();
            }
        };
    }
}
