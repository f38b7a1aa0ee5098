package io.pegaflow.core.instance;

import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.kernel.agent.AgentGroup;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One device of one instance (the reference's "GPU context"): the (tp_rank, pp_rank) it was registered for, its
 * layers, and two {@link DeviceLane} agents, one for saves and one for loads, that drive its {@link DeviceCopier}.
 *
 * <p>Ownership: owns the copier, both lanes and every layer's memory mapping. {@link #close()} stops accepting work,
 * waits for queued copies to drain, and only then closes the copier and unmaps the layers, so no copy ever touches
 * an unmapped tensor (the reference does not guard this). Lanes run once {@link #start} was called.
 */
public final class DeviceContext implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DeviceContext.class);
    private static final long DRAIN_TIMEOUT_SECONDS = 60;

    private final int deviceId;
    private final int tpRank;
    private final int ppRank;
    private final Map<String, LayerRegistration> layers;
    private final DeviceCopier copier;
    private final DeviceLane saveLane;
    private final DeviceLane loadLane;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Set by {@link #start}; null until then. */
    private volatile @Nullable AgentGroup agents;

    public DeviceContext(
            String instanceId,
            int deviceId,
            int tpRank,
            int ppRank,
            Map<String, LayerRegistration> layers,
            DeviceCopier copier) {
        this.deviceId = deviceId;
        this.tpRank = tpRank;
        this.ppRank = ppRank;
        this.layers = Collections.unmodifiableMap(new LinkedHashMap<>(layers));
        this.copier = copier;
        String prefix = "pega-" + instanceId + "-dev" + deviceId;
        this.saveLane = new DeviceLane(prefix + "-save", deviceId, DeviceLane.Direction.TO_HOST, copier);
        this.loadLane = new DeviceLane(prefix + "-load", deviceId, DeviceLane.Direction.TO_DEVICE, copier);
    }

    /** Starts both lanes; they report to {@code agents} until the context closes. Once. */
    public void start(AgentGroup agents) {
        this.agents = agents;
        saveLane.start(agents);
        loadLane.start(agents);
    }

    /**
     * Has each started lane prepare its copier for a request of every block of every layer, so that the instance's
     * first Save and Load do not create streams or grow descriptor buffers on their own time.
     *
     * @return completes when both lanes prepared (or gave up); nothing waits on it for correctness
     */
    public CompletableFuture<Void> prepareLanes() {
        long ranges = 0;
        long bytes = 0;
        for (LayerRegistration layer : layers.values()) {
            int planes = layer.isSplit() ? 2 : 1;
            ranges += layer.numBlocks() * planes;
            bytes += layer.numBlocks() * planes * layer.copySegmentBytes();
        }
        if (ranges == 0) {
            return CompletableFuture.completedFuture(null);
        }
        return CompletableFuture.allOf(saveLane.prepare(ranges, bytes), loadLane.prepare(ranges, bytes));
    }

    public int deviceId() {
        return deviceId;
    }

    public int tpRank() {
        return tpRank;
    }

    public int ppRank() {
        return ppRank;
    }

    /** The layer registered on this device under {@code name}, or null. */
    public @Nullable LayerRegistration layer(String name) {
        return layers.get(name);
    }

    public Map<String, LayerRegistration> layers() {
        return layers;
    }

    /** The lane that runs device-to-pool copies. */
    public DeviceLane saveLane() {
        return saveLane;
    }

    /** The lane that runs pool-to-device copies. */
    public DeviceLane loadLane() {
        return loadLane;
    }

    public boolean isClosed() {
        return closed.get();
    }

    /** Drains both lanes, then frees the copier and unmaps every layer. Idempotent. */
    @Override
    public void close() {
        closeAndCount();
    }

    /**
     * Does what {@link #close()} does and counts the mappings it released.
     *
     * @return how many layer mappings were closed (0 on a repeated call)
     */
    public int closeAndCount() {
        if (!closed.compareAndSet(false, true)) {
            return 0;
        }
        long timeout = TimeUnit.SECONDS.toNanos(DRAIN_TIMEOUT_SECONDS);
        boolean saveDrained = saveLane.stop(timeout);
        boolean loadDrained = loadLane.stop(timeout);
        AgentGroup group = agents;
        if (group != null) {
            group.remove(saveLane.runner());
            group.remove(loadLane.runner());
        }
        if (!saveDrained || !loadDrained) {
            // Unmapping under a running copy would corrupt or crash; keep the mappings and say so.
            LOG.error(
                    "device {} lanes did not drain in {} s; leaving its mappings in place",
                    deviceId,
                    DRAIN_TIMEOUT_SECONDS);
            return 0;
        }
        copier.close();
        for (LayerRegistration layer : layers.values()) {
            layer.memory().close();
        }
        return layers.size();
    }
}
