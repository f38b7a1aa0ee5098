package io.pegaflow.bench.jmh;

import io.pegaflow.core.device.Caller;
import io.pegaflow.core.device.DeviceBackend;
import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.device.LayerMemory;
import io.pegaflow.core.device.host.HostDeviceBackend;
import io.pegaflow.kernel.plan.RangePlan;

/**
 * The device backends a CPU-path benchmark runs on, so the copy cost can be told apart from the bookkeeping.
 *
 * <ul>
 *   <li>{@code host}: the real host backend, layers in {@code /dev/shm} and native memcpy on the device lanes.
 *   <li>{@code nocopy}: the same mappings and lanes, but the copier returns at once. Everything else (validation,
 *       dedup, pool allocation, copy plan, lane hand-off, sealing, index, leases) runs unchanged, so
 *       {@code host - nocopy} is the copy. This is the stub copy engine the CPU-path benchmark needs.
 * </ul>
 */
enum BenchBackend {
    HOST,
    NOCOPY;

    static BenchBackend of(String name) {
        return valueOf(name.toUpperCase(java.util.Locale.ROOT));
    }

    DeviceBackend create() {
        HostDeviceBackend host = new HostDeviceBackend();
        return this == HOST ? host : new NoCopyBackend(host);
    }

    /** Maps layers like the host backend; its copier copies nothing. */
    static final class NoCopyBackend implements DeviceBackend {
        private final HostDeviceBackend delegate;

        NoCopyBackend(HostDeviceBackend delegate) {
            this.delegate = delegate;
        }

        @Override
        public String name() {
            return "nocopy";
        }

        @Override
        public LayerMemory openLayer(Caller caller, int deviceId, byte[] wrapperBytes) {
            return delegate.openLayer(caller, deviceId, wrapperBytes);
        }

        @Override
        public DeviceCopier openCopier(int deviceId) {
            return new DeviceCopier() {
                @Override
                public void copyToHost(RangePlan plan) {}

                @Override
                public void copyToDevice(RangePlan plan) {}

                @Override
                public void close() {}
            };
        }

        @Override
        public void close() {
            delegate.close();
        }
    }
}
