package io.pegaflow.transfer.ucx;

import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.memory.MemoryRegionInfo;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.lane.LaneEngine;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * Builds the UCX transfer engine. Over a real InfiniBand or RoCE fabric the NICs are RDMA devices and gets and puts are
 * one-sided; without one, the same engine runs over UCX's TCP transport (network interfaces as NICs,
 * {@code transports=tcp}), where UCX emulates RMA with active messages and the target's progress thread serves them.
 * See {@code docs/transfer.md}.
 */
public final class UcxTransferEngine {
    private UcxTransferEngine() {}

    /**
     * Registers {@code regions} (a pool's shard mappings, which must stay mapped until the engine is closed) and starts
     * {@link TransferConfig#qpsPerPeer()} lanes.
     *
     * @throws io.pegaflow.transfer.TransferException {@code INIT_FAILED} when a NIC does not exist or UCX cannot start
     *     on what was configured
     */
    public static TransferEngine open(TransferConfig config, List<MemoryRegionInfo> regions, NanoClock clock) {
        return open(config, regions, clock, null, Path.of("/sys/class"));
    }

    /** As {@link #open(TransferConfig, List, NanoClock)}, with the completion executor and sysfs root given. */
    public static TransferEngine open(
            TransferConfig config,
            List<MemoryRegionInfo> regions,
            NanoClock clock,
            @Nullable Executor completions,
            Path sysClass) {
        return new LaneEngine(UcxFabric.open(config, regions, sysClass, null), clock, completions);
    }

    /**
     * As {@link #open(TransferConfig, List, NanoClock)} on {@code shared}'s context, for a pool allocated from
     * {@code shared}: its regions keep their allocations' handles (so peers on the same host read them through shared
     * memory). {@code shared} must be made for the same {@code config}; its context outlives the engine. A null
     * {@code shared} is {@link #open(TransferConfig, List, NanoClock)}.
     */
    public static TransferEngine open(
            TransferConfig config, @Nullable UcxSharedMemory shared, List<MemoryRegionInfo> regions, NanoClock clock) {
        return new LaneEngine(UcxFabric.open(config, regions, Path.of("/sys/class"), shared), clock, null);
    }
}
