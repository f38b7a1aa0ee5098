package io.pegaflow.core.device.host;

import io.pegaflow.core.device.CopyPlan;
import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.sys.Posix;

/**
 * Copies with libc memcpy on the calling lane thread. Plans are already coalesced, so a run of consecutive blocks is
 * one memcpy. No state: both directions are the same operation with source and destination swapped.
 */
final class HostDeviceCopier implements DeviceCopier {

    @Override
    public void copyToHost(CopyPlan plan) {
        for (int i = 0; i < plan.size(); i++) {
            // OFF-HEAP: device ranges were bounds-checked against the layer's registered size when the plan was
            // built; host ranges lie inside pool allocations the plan's owner holds references to.
            Posix.memcpy(plan.hostAddress(i), plan.deviceAddress(i), plan.lengthBytes(i));
        }
    }

    @Override
    public void copyToDevice(CopyPlan plan) {
        for (int i = 0; i < plan.size(); i++) {
            // OFF-HEAP: as above, reversed.
            Posix.memcpy(plan.deviceAddress(i), plan.hostAddress(i), plan.lengthBytes(i));
        }
    }

    @Override
    public void close() {}
}
