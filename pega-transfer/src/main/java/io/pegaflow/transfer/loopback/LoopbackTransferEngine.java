package io.pegaflow.transfer.loopback;

import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.memory.MemoryRegionInfo;
import io.pegaflow.transfer.HandshakeDescriptor;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.lane.LaneEngine;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * The transfer engine's contract with memcpy for a network: engines of one JVM connect to each other through their
 * descriptors exactly as UCX engines do, on the same lanes, validation and failure handling (the shared
 * {@link LaneEngine}); only moving the bytes differs. For tests and for servers run without a transfer fabric.
 */
public final class LoopbackTransferEngine {
    private LoopbackTransferEngine() {}

    /** An engine over {@code regions}, which must stay mapped until it is closed. NIC names are only counted. */
    public static TransferEngine open(TransferConfig config, List<MemoryRegionInfo> regions, NanoClock clock) {
        return open(config, regions, clock, null);
    }

    public static TransferEngine open(
            TransferConfig config, List<MemoryRegionInfo> regions, NanoClock clock, @Nullable Executor completions) {
        return new LaneEngine(new LoopbackFabric(config, regions), clock, completions);
    }

    /**
     * A bare peer node (no engine of its own) whose memory others can address, and which can be stopped: from
     * {@link StoppablePeer#stop()} on it completes nothing, as a process stopped with SIGSTOP, so operations to it end
     * only at their deadline. Closing it makes it vanish.
     */
    public static StoppablePeer stoppablePeer(TransferConfig config, List<MemoryRegionInfo> regions) {
        return new StoppablePeer(
                new LoopbackFabric(config, regions), config.nics().size());
    }

    /** See {@link #stoppablePeer}. */
    public static final class StoppablePeer implements AutoCloseable {
        private final LoopbackFabric fabric;
        private final HandshakeDescriptor descriptor;

        private StoppablePeer(LoopbackFabric fabric, int nics) {
            this.fabric = fabric;
            List<byte[]> addresses = new ArrayList<>();
            for (LoopbackLane lane : fabric.lanes()) {
                addresses.add(lane.address());
            }
            this.descriptor = new HandshakeDescriptor(
                    HandshakeDescriptor.Fabric.LOOPBACK, fabric.instanceId(), addresses, nics, fabric.regions());
        }

        public HandshakeDescriptor descriptor() {
            return descriptor;
        }

        public void stop() {
            fabric.node().stop();
        }

        @Override
        public void close() {
            fabric.release();
        }
    }
}
