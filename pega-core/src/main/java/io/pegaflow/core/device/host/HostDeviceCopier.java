package io.pegaflow.core.device.host;

import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.plan.RangePlan;
import io.pegaflow.sys.Posix;

/**
 * Copies with libc memcpy on the calling lane thread. Plans are already coalesced, so a run of consecutive blocks is
 * one memcpy. No state: both directions are the same operation, from each range's source to its destination.
 */
final class HostDeviceCopier implements DeviceCopier {

    @Override
    public void copyToHost(RangePlan plan) {
        copy(plan);
    }

    @Override
    public void copyToDevice(RangePlan plan) {
        copy(plan);
    }

    private static void copy(RangePlan plan) {
        for (int i = 0; i < plan.size(); i++) {
            // OFF-HEAP: device ranges were bounds-checked against the layer's registered size when the plan was
            // built; host ranges lie inside pool allocations the plan's owner holds references to.
            Posix.memcpy(plan.dstAddress(i), plan.srcAddress(i), plan.lengthBytes(i));
        }
    }

    @Override
    public void close() {}
}
