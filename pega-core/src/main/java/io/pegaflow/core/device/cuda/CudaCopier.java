package io.pegaflow.core.device.cuda;

import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.plan.RangePlan;
import io.pegaflow.sys.cuda.Cuda;
import io.pegaflow.sys.cuda.CudaException;
import java.util.concurrent.locks.Lock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The copy engine of one (instance, device) context: a save lane and a load lane, each with its own non-blocking
 * stream and completion event, created on first use by the lane's own thread (which also gets the device's primary
 * context made current). A plan's merged ranges are enqueued as one {@code cuMemcpy*Async} each, followed by one
 * event record and synchronize (spec/engine-api.md §3.4), so a call returns only after every byte has landed.
 *
 * <p>Thread model: {@link #copyToHost} runs only on the save lane thread and {@link #copyToDevice} only on the load
 * lane thread (the {@link DeviceCopier} contract), so each lane's fields are confined to one thread; {@link #close}
 * runs after both lanes have drained.
 */
final class CudaCopier implements DeviceCopier {
    private static final Logger log = LoggerFactory.getLogger(CudaCopier.class);

    private final CudaDeviceBackend.DeviceState device;
    private final Lane save = new Lane("save");
    private final Lane load = new Lane("load");
    private volatile boolean closed;

    CudaCopier(CudaDeviceBackend.DeviceState device) {
        this.device = device;
    }

    @Override
    public void copyToHost(RangePlan plan) {
        run(save, plan, true);
    }

    @Override
    public void copyToDevice(RangePlan plan) {
        run(load, plan, false);
    }

    private void run(Lane lane, RangePlan plan, boolean toHost) {
        if (closed) {
            throw EngineException.storage("batch copy failed: the copier of device " + device.ordinal + " is closed");
        }
        if (plan.isEmpty()) {
            return;
        }
        Lock gate = device.copyGate.readLock();
        gate.lock();
        try {
            Cuda.ctxSetCurrent(device.ctx);
            lane.ensure();
            int n = plan.size();
            int issued = 0;
            try {
                if (toHost) {
                    for (int i = 0; i < n; i++) {
                        Cuda.memcpyDtoHAsync(plan.dstAddress(i), plan.srcAddress(i), plan.lengthBytes(i), lane.stream);
                        issued++;
                    }
                } else {
                    for (int i = 0; i < n; i++) {
                        Cuda.memcpyHtoDAsync(plan.dstAddress(i), plan.srcAddress(i), plan.lengthBytes(i), lane.stream);
                        issued++;
                    }
                }
                Cuda.eventRecord(lane.event, lane.stream);
                Cuda.eventSynchronize(lane.event);
            } catch (CudaException e) {
                // Never return while earlier copies of this plan may still be writing: drain the stream first.
                if (issued > 0) {
                    try {
                        Cuda.streamSynchronize(lane.stream);
                    } catch (CudaException drain) {
                        e.addSuppressed(drain);
                    }
                }
                throw EngineException.storage(
                        "batch copy failed on device " + device.ordinal + " (" + lane.name + ", range " + issued
                                + " of " + n + "): " + e.getMessage(),
                        e);
            }
        } catch (CudaException e) {
            throw EngineException.storage(
                    "batch copy failed on device " + device.ordinal + " (" + lane.name + "): " + e.getMessage(), e);
        } finally {
            gate.unlock();
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            Cuda.ctxSetCurrent(device.ctx);
        } catch (CudaException e) {
            log.warn("device {}: cannot bind the context to free copier streams: {}", device.ordinal, e.getMessage());
            return;
        }
        save.destroy();
        load.destroy();
    }

    /** One direction's stream and event; created by, and afterwards used only by, the lane thread. */
    private final class Lane {
        final String name;
        long stream;
        long event;

        Lane(String name) {
            this.name = name;
        }

        void ensure() {
            if (stream == 0) {
                stream = Cuda.streamCreate(Cuda.CU_STREAM_NON_BLOCKING);
                event = Cuda.eventCreate(Cuda.CU_EVENT_DISABLE_TIMING
                        | (CudaDeviceBackend.BLOCKING_SYNC ? Cuda.CU_EVENT_BLOCKING_SYNC : 0));
            }
        }

        void destroy() {
            if (stream == 0) {
                return;
            }
            try {
                Cuda.streamSynchronize(stream);
                Cuda.eventDestroy(event);
                Cuda.streamDestroy(stream);
            } catch (CudaException e) {
                log.warn("device {}: freeing the {} stream failed: {}", device.ordinal, name, e.getMessage());
            }
            stream = 0;
            event = 0;
        }
    }
}
