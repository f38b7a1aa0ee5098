package io.pegaflow.transfer.ucx;

import io.pegaflow.kernel.memory.MemoryRegionInfo;
import io.pegaflow.transfer.HandshakeDescriptor;
import io.pegaflow.transfer.RegisteredRegion;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferException;
import io.pegaflow.transfer.TransferException.Kind;
import io.pegaflow.transfer.lane.Fabric;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.openucx.jucx.UcxException;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpMemMapParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The UCX data plane: one {@code UcpContext} over the configured NICs (its own, or a {@link UcxSharedMemory}'s that
 * allocated the pool), the pool's regions registered with it once ({@code ucp_mem_map} of the existing mapping, or the
 * allocation's own handle, so peers address pool memory directly), and one {@code UcpWorker} per lane.
 *
 * <p>Release order, the one UCX survives (a context closed while memory is still mapped aborts the JVM in
 * {@code rcache.c}): the lanes first close their endpoints, destroy remote keys and close their workers on their own
 * threads; then {@link #release()} unmaps the regions and closes the context.
 */
final class UcxFabric implements Fabric {
    private static final Logger LOG = LoggerFactory.getLogger(UcxFabric.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final TransferConfig config;
    private final long instanceId = RANDOM.nextLong();
    private final UcpContext context;
    /** Where the context was borrowed from, which closes it; null when this fabric owns it. */
    private final @Nullable UcxSharedMemory shared;
    /** What this fabric registered itself; a shared memory's allocations are released by the pool. */
    private final List<UcpMemory> memories;

    private final List<RegisteredRegion> regions;
    private final List<UcxLane> lanes;

    private UcxFabric(
            TransferConfig config,
            UcpContext context,
            @Nullable UcxSharedMemory shared,
            List<UcpMemory> memories,
            List<RegisteredRegion> regions,
            List<UcxLane> lanes) {
        this.config = config;
        this.context = context;
        this.shared = shared;
        this.memories = memories;
        this.regions = regions;
        this.lanes = lanes;
    }

    /**
     * Creates the context (or borrows {@code shared}'s), registers the regions (a region {@code shared} allocated keeps
     * that allocation's memory handle) and creates the workers. On any failure everything made so far is released
     * again, in order, and the failure is reported: there is no fallback to running without transfers.
     *
     * @throws TransferException {@link Kind#INIT_FAILED} naming the NICs, transports and UCX's reason
     */
    static UcxFabric open(
            TransferConfig config, List<MemoryRegionInfo> pool, Path sysClass, @Nullable UcxSharedMemory shared) {
        if (shared != null && !shared.serves(config)) {
            throw new IllegalArgumentException("the shared memory's context was made for " + shared.config()
                    + ", the engine is asked for " + config + " (NICs and transports must be the same)");
        }
        UcpContext context = shared != null ? shared.borrow() : UcxContexts.open(config, sysClass);
        List<UcpMemory> owned = new ArrayList<>();
        List<UcpWorker> workers = new ArrayList<>();
        try {
            List<MemoryRegionInfo> sorted = new ArrayList<>(pool);
            sorted.sort(Comparator.comparingLong(MemoryRegionInfo::address));
            List<RegisteredRegion> regions = new ArrayList<>(sorted.size());
            for (MemoryRegionInfo r : sorted) {
                UcpMemory memory = shared == null ? null : shared.memoryHolding(r.address(), r.lengthBytes());
                if (memory == null) {
                    memory = context.memoryMap(
                            new UcpMemMapParams().setAddress(r.address()).setLength(r.lengthBytes()));
                    owned.add(memory);
                }
                regions.add(new RegisteredRegion(r.address(), r.lengthBytes(), bytes(memory.getRemoteKeyBuffer())));
            }
            List<UcxLane> lanes = new ArrayList<>(config.qpsPerPeer());
            for (int i = 0; i < config.qpsPerPeer(); i++) {
                UcpWorker worker = context.newWorker(new UcpWorkerParams());
                workers.add(worker);
                lanes.add(new UcxLane(i, worker, config.peerErrorHandling()));
            }
            return new UcxFabric(config, context, shared, owned, List.copyOf(regions), List.copyOf(lanes));
        } catch (UcxException e) {
            workers.forEach(UcpWorker::close);
            owned.forEach(UcpMemory::deregister);
            closeOrGiveBack(context, shared);
            throw UcxContexts.initFailed(config, Objects.requireNonNullElse(e.getMessage(), e.toString()), e);
        }
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    @Override
    public HandshakeDescriptor.Fabric kind() {
        return HandshakeDescriptor.Fabric.UCX;
    }

    @Override
    public long instanceId() {
        return instanceId;
    }

    @Override
    public List<String> nics() {
        return config.nics();
    }

    @Override
    public String transports() {
        return config.transports();
    }

    @Override
    public List<RegisteredRegion> regions() {
        return regions;
    }

    @Override
    public List<UcxLane> lanes() {
        return lanes;
    }

    @Override
    public void release() {
        memories.forEach(UcpMemory::deregister);
        closeOrGiveBack(context, shared);
    }

    private static void closeOrGiveBack(UcpContext context, @Nullable UcxSharedMemory shared) {
        if (shared == null) {
            context.close();
        } else {
            shared.giveBack();
        }
    }

    @Override
    public void abandon() {
        LOG.error(
                "UCX context with {} registered regions left open: a lane did not close its endpoints, and unmapping"
                        + " memory under a live endpoint aborts the process",
                memories.size());
    }
}
