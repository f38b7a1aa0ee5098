package io.pegaflow.push.layout;

import io.pegaflow.core.device.DeviceBackend;
import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.engine.SideRegistrations;
import io.pegaflow.core.instance.LayerRegistration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One worker rank's KV layers as registered for pushing: the layer memory mapped through the engine's device backend
 * (the same {@code wrapper_bytes} as {@code RegisterContext}) and validated by the same {@link LayerRegistration}
 * rules, so every copy range is checked against the registered memory.
 *
 * <p>Ownership: owns every layer's memory reference, the two copiers it opened (device to pool for pushing, pool to
 * device for receiving; each is only ever driven by one agent thread, the copier contract) and the engine's admission
 * ticket (the instance id and the mapping budget). {@link #close()} releases them once, after the table saw no session
 * using it ({@link #retain()}/{@link #release()}); a {@link #retire() retired} registration closes itself when its last
 * session releases it.
 */
public final class RankLayers implements AutoCloseable {
    private final String instanceId;
    private final int tpRank;
    private final int tpSize;
    private final int deviceId;
    private final List<LayerRegistration> layers;
    private final DeviceBackend backend;
    private @Nullable DeviceCopier pushCopier;
    private @Nullable DeviceCopier receiveCopier;
    private final SideRegistrations.Ticket ticket;
    private int users;
    private boolean retired;
    private boolean closed;

    public RankLayers(
            String instanceId,
            int tpRank,
            int tpSize,
            int deviceId,
            List<LayerRegistration> layers,
            DeviceBackend backend,
            SideRegistrations.Ticket ticket) {
        this.instanceId = instanceId;
        this.tpRank = tpRank;
        this.tpSize = tpSize;
        this.deviceId = deviceId;
        this.layers = List.copyOf(layers);
        this.backend = backend;
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

    /** The copier of the push agent (device to pool), opened on first use. */
    public synchronized DeviceCopier pushCopier() {
        if (pushCopier == null) {
            pushCopier = backend.openCopier(deviceId);
        }
        return pushCopier;
    }

    /** The copier of the receive agent (pool to device), opened on first use. */
    public synchronized DeviceCopier receiveCopier() {
        if (receiveCopier == null) {
            receiveCopier = backend.openCopier(deviceId);
        }
        return receiveCopier;
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
    public synchronized void release() {
        users--;
        if (retired && users == 0) {
            close();
        }
    }

    /** No new session may use these layers; closes now when none does, else when the last one releases. */
    public synchronized void retire() {
        retired = true;
        if (users == 0) {
            close();
        }
    }

    public synchronized boolean inUse() {
        return users > 0;
    }

    /** Releases copiers and layer memory once. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (pushCopier != null) {
            pushCopier.close();
        }
        if (receiveCopier != null) {
            receiveCopier.close();
        }
        for (LayerRegistration l : layers) {
            l.memory().close();
        }
        ticket.close();
    }
}
