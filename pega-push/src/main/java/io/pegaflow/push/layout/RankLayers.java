package io.pegaflow.push.layout;

import io.pegaflow.core.engine.DeviceWorkers;
import io.pegaflow.core.engine.SideRegistrations;
import io.pegaflow.core.instance.LayerRegistration;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.kernel.plan.RangePlan;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One worker rank's KV layers as registered for pushing: the layer memory mapped through the engine's
 * {@link DeviceWorkers} (the same {@code wrapper_bytes} as {@code RegisterContext}) and validated by the same
 * {@link LayerRegistration} rules, so every copy range is checked against the registered memory. Its copies run on the
 * engine's lanes of its device (device to pool for pushing, pool to device for receiving).
 *
 * <p>Ownership: owns every layer's memory reference, its lease on the device's lanes and the engine's admission ticket
 * (the instance id and the mapping budget). {@link #close()} releases them once, after the table saw no session using
 * it ({@link #retain()}/{@link #release()}); a {@link #retire() retired} registration closes itself when its last
 * session releases it. A copy still queued on a lane holds the layer memory and its staging until it ran, so the
 * mappings close after the last of them even when nobody waits for it any more.
 */
public final class RankLayers implements AutoCloseable {
    private final String instanceId;
    private final int tpRank;
    private final int tpSize;
    private final int deviceId;
    private final List<LayerRegistration> layers;
    private final DeviceWorkers.Lanes lanes;
    private final SideRegistrations.Ticket ticket;
    private int users;
    private int copies; // queued on the lanes, not yet run or abandoned
    private boolean retired;
    private boolean closed;
    private boolean released; // memory and ticket given back

    public RankLayers(
            String instanceId,
            int tpRank,
            int tpSize,
            int deviceId,
            List<LayerRegistration> layers,
            DeviceWorkers.Lanes lanes,
            SideRegistrations.Ticket ticket) {
        this.instanceId = instanceId;
        this.tpRank = tpRank;
        this.tpSize = tpSize;
        this.deviceId = deviceId;
        this.layers = List.copyOf(layers);
        this.lanes = lanes;
        this.ticket = ticket;
    }

    public String instanceId() {
        return instanceId;
    }

    public int tpRank() {
        return tpRank;
    }

    public int tpSize() {
        return tpSize;
    }

    public int deviceId() {
        return deviceId;
    }

    public List<LayerRegistration> layers() {
        return layers;
    }

    public int layerCount() {
        return layers.size();
    }

    /** Copied ranges per block of layer {@code l}: 2 for a split K/V layout, else 1. */
    public int segments(int l) {
        return layers.get(l).isSplit() ? 2 : 1;
    }

    /** Bytes of each copied range of layer {@code l}. */
    public long segmentBytes(int l) {
        return layers.get(l).copySegmentBytes();
    }

    /**
     * Queues {@code plan} (device ranges of these layers to {@code staging}) on the device's save lane; the copy holds
     * a reference to {@code staging} and to these layers until it ran.
     *
     * @throws io.pegaflow.core.error.EngineException when the lane refuses it (full, stopping)
     */
    public CompletableFuture<Void> copyToStaging(RangePlan plan, PinnedAllocation staging) {
        hold(staging);
        return lanes.copyToHost(plan, () -> unhold(staging));
    }

    /** Queues {@code plan} ({@code staging} to device ranges of these layers) on the device's load lane; as above. */
    public CompletableFuture<Void> copyToDevice(RangePlan plan, PinnedAllocation staging) {
        hold(staging);
        return lanes.copyToDevice(plan, () -> unhold(staging));
    }

    private synchronized void hold(PinnedAllocation staging) {
        staging.retain();
        copies++;
    }

    /** Runs on a lane thread: never closes the lanes, only what the copy held. */
    private void unhold(PinnedAllocation staging) {
        staging.release();
        boolean last;
        synchronized (this) {
            last = --copies == 0 && closed && !released;
            released |= last;
        }
        if (last) {
            releaseMemory();
        }
    }

    /** A session starts using these layers; false when they were already replaced, retired or closed. */
    public synchronized boolean retain() {
        if (closed || retired) {
            return false;
        }
        users++;
        return true;
    }

    /** A session stopped using these layers; the last one closes a retired registration. */
    public void release() {
        boolean last;
        synchronized (this) {
            users--;
            last = retired && users == 0;
        }
        if (last) {
            close();
        }
    }

    /** No new session may use these layers; closes now when none does, else when the last one releases. */
    public void retire() {
        boolean idle;
        synchronized (this) {
            retired = true;
            idle = users == 0;
        }
        if (idle) {
            close();
        }
    }

    public synchronized boolean inUse() {
        return users > 0;
    }

    /**
     * Gives the lanes back and, once no queued copy holds them, the layer memory and the ticket; once. Not under this
     * object's lock: the last lease drains the lanes, whose copies take it when they end.
     */
    @Override
    public void close() {
        boolean now;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            now = copies == 0;
            released |= now;
        }
        lanes.close();
        if (now) {
            releaseMemory();
        }
    }

    private void releaseMemory() {
        for (LayerRegistration l : layers) {
            l.memory().close();
        }
        ticket.close();
    }
}
