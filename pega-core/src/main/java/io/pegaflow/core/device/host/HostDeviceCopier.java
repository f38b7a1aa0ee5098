package io.pegaflow.core.device.host;

import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.kernel.plan.RangePlan;
import io.pegaflow.sys.NativeException;
import io.pegaflow.sys.SelfVmCopy;

/**
 * Copies between a worker's shared-memory objects and pool memory on the calling lane thread, up to
 * {@link SelfVmCopy#MAX_RANGES} coalesced ranges per system call.
 *
 * <p>The worker owns its objects and may shrink one ({@code ftruncate}) under our mapping at any time; a plain memcpy
 * would then raise SIGBUS and take the whole server down. {@link SelfVmCopy} lets the kernel do the copy, and a page
 * past the new end comes back as a short count: the Save or Load fails, nothing else does
 * (docs/decisions/0006-hostile-clients.md). One {@link SelfVmCopy} per direction, since the save and load lanes run
 * at the same time.
 */
final class HostDeviceCopier implements DeviceCopier {
    private final SelfVmCopy saves = new SelfVmCopy();
    private final SelfVmCopy loads = new SelfVmCopy();

    /** Save: each range's source is on the device (the worker's object), its destination in the pool. */
    @Override
    public void copyToHost(RangePlan plan) {
        for (int i = 0; i < plan.size(); i++) {
            // OFF-HEAP: pool ranges lie inside allocations the plan's owner holds references to; device ranges were
            // bounds-checked against the layer's registration, and the kernel checks them against the mapping.
            saves.add(plan.dstAddress(i), plan.srcAddress(i), plan.lengthBytes(i));
            if (saves.size() == SelfVmCopy.MAX_RANGES || i == plan.size() - 1) {
                flush(saves, false);
            }
        }
    }

    /** Load: each range's source is in the pool, its destination on the device. */
    @Override
    public void copyToDevice(RangePlan plan) {
        for (int i = 0; i < plan.size(); i++) {
            // OFF-HEAP: as above, reversed.
            loads.add(plan.srcAddress(i), plan.dstAddress(i), plan.lengthBytes(i));
            if (loads.size() == SelfVmCopy.MAX_RANGES || i == plan.size() - 1) {
                flush(loads, true);
            }
        }
    }

    private static void flush(SelfVmCopy batch, boolean toDevice) {
        long requested = batch.requestedBytes();
        long copied;
        try {
            copied = toDevice ? batch.write() : batch.read();
        } catch (NativeException e) {
            throw EngineException.storage("batch copy failed: " + e.getMessage(), e);
        }
        if (copied != requested) {
            throw EngineException.storage(
                    "batch copy failed: the worker's shared-memory object no longer covers its registered range");
        }
    }

    @Override
    public void close() {
        saves.close();
        loads.close();
    }
}
