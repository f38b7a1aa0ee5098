package io.pegaflow.core.instance;

import io.pegaflow.core.agent.NamedThreadFactory;
import io.pegaflow.core.device.DeviceCopier;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One device of one instance (the reference's "GPU context"): the (tp_rank, pp_rank) it was registered for, its
 * layers, and two lane threads, one for saves and one for loads, that drive its {@link DeviceCopier}.
 *
 * <p>Ownership: owns the copier, both lanes and every layer's memory mapping. {@link #close()} stops accepting work,
 * waits for queued copies to drain, and only then closes the copier and unmaps the layers, so no copy ever touches
 * an unmapped tensor (the reference does not guard this).
 */
public final class DeviceContext implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DeviceContext.class);
    private static final long DRAIN_TIMEOUT_SECONDS = 60;

    private final int deviceId;
    private final int tpRank;
    private final int ppRank;
    private final Map<String, LayerRegistration> layers;
    private final DeviceCopier copier;
    private final ExecutorService saveLane;
    private final ExecutorService loadLane;
    private final AtomicBoolean closed = new AtomicBoolean();

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
        this.saveLane = lane("pega-" + instanceId + "-dev" + deviceId + "-save");
        this.loadLane = lane("pega-" + instanceId + "-dev" + deviceId + "-load");
    }

    private static ExecutorService lane(String name) {
        return new ThreadPoolExecutor(
                1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), new NamedThreadFactory(name));
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
    public LayerRegistration layer(String name) {
        return layers.get(name);
    }

    public Map<String, LayerRegistration> layers() {
        return layers;
    }

    public DeviceCopier copier() {
        return copier;
    }

    /** The thread that runs device-to-pool copies. */
    public ExecutorService saveLane() {
        return saveLane;
    }

    /** The thread that runs pool-to-device copies. */
    public ExecutorService loadLane() {
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
        saveLane.shutdown();
        loadLane.shutdown();
        try {
            if (!saveLane.awaitTermination(DRAIN_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                    || !loadLane.awaitTermination(DRAIN_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                // Unmapping under a running copy would corrupt or crash; keep the mappings and say so.
                LOG.error(
                        "device {} lanes did not drain in {} s; leaving its mappings in place",
                        deviceId,
                        DRAIN_TIMEOUT_SECONDS);
                return 0;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            LOG.error("interrupted while draining device {}; leaving its mappings in place", deviceId);
            return 0;
        }
        copier.close();
        for (LayerRegistration layer : layers.values()) {
            layer.memory().close();
        }
        return layers.size();
    }
}
