package io.pegaflow.core.device.cuda;

import io.pegaflow.kernel.plan.RangePlan;

/**
 * What the copy policy looks at in a plan: how many ranges, how many bytes, and whether every range's source and
 * destination addresses are co-aligned at 16 bytes (the kernel's vector path). One pass over the plan, no allocation.
 *
 * @param ranges merged ranges
 * @param bytes bytes in all
 * @param coaligned16 every range has {@code (src ^ dst) % 16 == 0}
 */
record PlanShape(int ranges, long bytes, boolean coaligned16) {

    static PlanShape of(RangePlan plan) {
        long skew = 0;
        for (int i = 0; i < plan.size(); i++) {
            skew |= plan.srcAddress(i) ^ plan.dstAddress(i);
        }
        return new PlanShape(plan.size(), plan.totalBytes(), (skew & 15) == 0);
    }

    /** Mean bytes per range; 0 for an empty plan. */
    long meanRangeBytes() {
        return ranges == 0 ? 0 : bytes / ranges;
    }
}
