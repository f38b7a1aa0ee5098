package io.pegaflow.core.engine;

import io.pegaflow.core.device.Caller;
import io.pegaflow.core.device.DeviceBackend;
import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.device.LayerMemory;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.DeviceContext;
import io.pegaflow.core.instance.DeviceLane;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.plan.RangePlan;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * The engine's device work for layers mapped beside the cache (the P/D push, decision 0025): it maps a worker's layer
 * memory through the engine's device backend, and it runs copies on the engine's {@link DeviceLane}s of that device,
 * so one owner schedules every copy on a GPU.
 *
 * <p>Per device there is one lane pair, a {@link DeviceContext} of the engine with no layers of its own (its save lane
 * copies device to pool, its load lane pool to device; the threads are named {@code pega-push-dev<N>-save} and
 * {@code -load}). The first {@link #lanes} lease of a device starts it, counted like any device context against
 * {@code pega.limits.devices} and {@code pega.limits.lane-threads}; the last lease to close drains and stops it. The
 * lanes' queue bound ({@link DeviceLane#QUEUE_DEPTH}) and drain-before-unmap rule apply unchanged.
 *
 * <p>Thread-safe. The engine closes what is still leased when it closes, before the backend and the pool.
 */
public final class DeviceWorkers {
    /** The instance part of the lane threads' names. */
    static final String ROLE = "push";

    private final DeviceBackend backend;
    private final RegistrationBudget budget;
    private final AgentGroup agents;
    private final LongAdder copies = new LongAdder();
    /** Guarded by {@code this}. */
    private final Map<Integer, Shared> devices = new HashMap<>();
    /** Guarded by {@code this}. */
    private boolean closed;

    private static final class Shared {
        final DeviceContext lanes;
        int leases;

        Shared(DeviceContext lanes) {
            this.lanes = lanes;
        }
    }

    DeviceWorkers(DeviceBackend backend, RegistrationBudget budget, AgentGroup agents) {
        this.backend = backend;
        this.budget = budget;
        this.agents = agents;
    }

    /**
     * Maps one layer of a worker's device memory, as RegisterContext maps it (same {@code wrapper_bytes}, same checks).
     *
     * @return the mapping, owned by the caller, who closes it once
     */
    public LayerMemory openLayer(Caller caller, int deviceId, byte[] wrapperBytes) {
        return backend.openLayer(caller, deviceId, wrapperBytes);
    }

    /**
     * A lease on the engine's copy lanes of {@code deviceId}, starting them if no lease holds them.
     *
     * @return the lease; close it once, after the copies it queued are no longer awaited
     * @throws EngineException RESOURCE_EXHAUSTED naming {@code pega.limits.devices} or {@code pega.limits.lane-threads}
     *     when the lanes would pass them, UNAVAILABLE once the engine is shutting down
     */
    public Lanes lanes(int deviceId) {
        Shared shared;
        synchronized (this) {
            if (closed) {
                throw EngineException.unavailable("engine is shutting down");
            }
            shared = devices.get(deviceId);
            if (shared == null) {
                shared = new Shared(start(deviceId));
                devices.put(deviceId, shared);
            }
            shared.leases++;
        }
        return new Lanes(deviceId, shared);
    }

    private DeviceContext start(int deviceId) {
        budget.reserve(0);
        try {
            DeviceCopier copier = backend.openCopier(deviceId);
            DeviceContext lanes = new DeviceContext(ROLE, deviceId, 0, 0, Map.of(), copier);
            lanes.start(agents);
            return lanes;
        } catch (RuntimeException e) {
            budget.release(0);
            throw e;
        }
    }

    private void leaseClosed(int deviceId, Shared shared) {
        synchronized (this) {
            if (--shared.leases > 0 || devices.get(deviceId) != shared) {
                return;
            }
            devices.remove(deviceId);
        }
        stop(shared);
    }

    /** Drains the lanes (queued copies finish first), then frees the copier; outside the lock, it may wait. */
    private void stop(Shared shared) {
        shared.lanes.close();
        budget.release(0);
    }

    /** Copies the lanes of this engine ran to the end, over all devices. */
    public long copiesRun() {
        return copies.sum();
    }

    /** Devices whose lanes are running (held by a lease). */
    public synchronized int activeDevices() {
        return devices.size();
    }

    /** Stops every device's lanes still leased; a later {@link #lanes} is refused. Idempotent. */
    void close() {
        Shared[] left;
        synchronized (this) {
            closed = true;
            left = devices.values().toArray(new Shared[0]);
            devices.clear();
        }
        for (Shared shared : left) {
            stop(shared);
        }
    }

    /**
     * One lease on a device's lanes. A copy holds whatever its {@code afterCopy} gives back: that runs exactly once,
     * on the lane thread after the copy ran or when the lane stopped before it could (or on the caller's thread when
     * the lane refused it), so memory the copy reads or writes stays owned until the device is done with it, even
     * when the caller stopped waiting.
     */
    public final class Lanes implements AutoCloseable {
        private final int deviceId;
        private final Shared shared;
        private boolean closed;

        private Lanes(int deviceId, Shared shared) {
            this.deviceId = deviceId;
            this.shared = shared;
        }

        public int deviceId() {
            return deviceId;
        }

        /**
         * Queues a device-to-pool copy on the device's save lane.
         *
         * @return completes once every byte landed, or exceptionally with the copier's error or when the lane stopped
         * @throws EngineException RESOURCE_EXHAUSTED when the lane's queue is full, FAILED_PRECONDITION while it stops
         */
        public CompletableFuture<Void> copyToHost(RangePlan plan, Runnable afterCopy) {
            return queue(shared.lanes.saveLane(), plan, true, afterCopy);
        }

        /** Queues a pool-to-device copy on the device's load lane; otherwise as {@link #copyToHost}. */
        public CompletableFuture<Void> copyToDevice(RangePlan plan, Runnable afterCopy) {
            return queue(shared.lanes.loadLane(), plan, false, afterCopy);
        }

        private CompletableFuture<Void> queue(DeviceLane lane, RangePlan plan, boolean toHost, Runnable afterCopy) {
            CopyJob job = new CopyJob(plan, toHost, afterCopy);
            try {
                lane.submit(job);
            } catch (RuntimeException e) {
                afterCopy.run();
                throw e;
            }
            return job.done;
        }

        /** Gives the lease back; the last one drains and stops the device's lanes. Idempotent; never on a lane. */
        @Override
        public void close() {
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
            }
            leaseClosed(deviceId, shared);
        }
    }

    private final class CopyJob implements DeviceLane.Job {
        private final RangePlan plan;
        private final boolean toHost;
        private final Runnable afterCopy;
        final CompletableFuture<Void> done = new CompletableFuture<>();

        CopyJob(RangePlan plan, boolean toHost, Runnable afterCopy) {
            this.plan = plan;
            this.toHost = toHost;
            this.afterCopy = afterCopy;
        }

        @Override
        public void run(DeviceCopier copier) {
            @Nullable RuntimeException failure = null;
            try {
                if (toHost) {
                    copier.copyToHost(plan);
                } else {
                    copier.copyToDevice(plan);
                }
                copies.increment();
            } catch (RuntimeException e) {
                failure = e;
            }
            finish(failure);
        }

        @Override
        public void abandon() {
            finish(EngineException.unavailable("the device lane stopped before the copy ran"));
        }

        /** Gives back what the copy held before the waiter wakes, so it sees nothing outstanding. */
        private void finish(@Nullable RuntimeException failure) {
            try {
                afterCopy.run();
            } finally {
                if (failure == null) {
                    done.complete(null);
                } else {
                    done.completeExceptionally(failure);
                }
            }
        }
    }
}
