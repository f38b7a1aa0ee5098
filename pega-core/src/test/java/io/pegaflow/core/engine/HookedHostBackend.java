package io.pegaflow.core.engine;

import io.pegaflow.core.device.Caller;
import io.pegaflow.core.device.DeviceBackend;
import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.device.LayerMemory;
import io.pegaflow.core.device.host.HostDeviceBackend;
import io.pegaflow.kernel.plan.RangePlan;

/**
 * The host backend with a {@link CopyHook} that sees every plan before it is copied: a test records the plans of the
 * lane, holds a copy back or fails a chosen one. A test overrides {@link #openCopier} or {@link #close} for faults of
 * its own. The host backend stays the owner of every mapping; closing this closes it.
 */
class HookedHostBackend implements DeviceBackend {
    /** Called before each copy; an exception it throws fails that copy instead. */
    @FunctionalInterface
    interface CopyHook {
        CopyHook NONE = (plan, toHost) -> {};

        void beforeCopy(RangePlan plan, boolean toHost);

        /** Called when a lane prepares its copier ({@link DeviceCopier#prepareToHost}); nothing by default. */
        default void prepared(long ranges, long bytes, boolean toHost) {}
    }

    final HostDeviceBackend host;
    private final CopyHook hook;

    /** Over a host backend of its own. */
    HookedHostBackend(CopyHook hook) {
        this(new HostDeviceBackend(), hook);
    }

    HookedHostBackend(HostDeviceBackend host, CopyHook hook) {
        this.host = host;
        this.hook = hook;
    }

    @Override
    public String name() {
        return host.name();
    }

    @Override
    public LayerMemory openLayer(Caller caller, int deviceId, byte[] wrapperBytes) {
        return host.openLayer(caller, deviceId, wrapperBytes);
    }

    @Override
    public DeviceCopier openCopier(int deviceId) {
        DeviceCopier copier = host.openCopier(deviceId);
        return new DeviceCopier() {
            @Override
            public void copyToHost(RangePlan plan) {
                hook.beforeCopy(plan, true);
                copier.copyToHost(plan);
            }

            @Override
            public void copyToDevice(RangePlan plan) {
                hook.beforeCopy(plan, false);
                copier.copyToDevice(plan);
            }

            @Override
            public void prepareToHost(long ranges, long bytes) {
                hook.prepared(ranges, bytes, true);
                copier.prepareToHost(ranges, bytes);
            }

            @Override
            public void prepareToDevice(long ranges, long bytes) {
                hook.prepared(ranges, bytes, false);
                copier.prepareToDevice(ranges, bytes);
            }

            @Override
            public void close() {
                copier.close();
            }
        };
    }

    @Override
    public void close() {
        host.close();
    }
}
