package io.pegaflow.core.device;

import io.pegaflow.kernel.plan.RangePlan;

/**
 * The copy engine of one (instance, device) context. {@link #copyToHost} is only called from the context's save lane
 * thread and {@link #copyToDevice} only from its load lane thread, so an implementation may keep per-lane state
 * (a CUDA stream, a bound context) without locking.
 *
 * <p>Both calls return only after every byte of the plan has landed; a failure throws
 * {@link io.pegaflow.core.error.EngineException} (INTERNAL, {@code "storage error: ..."}).
 */
public interface DeviceCopier extends AutoCloseable {

    /** Device to pool, the save direction: each range's source is device memory, its destination pool memory. */
    void copyToHost(RangePlan plan);

    /** Pool to device, the load direction: each range's source is pool memory, its destination device memory. */
    void copyToDevice(RangePlan plan);

    /** Frees per-context resources (streams). Called after both lanes have drained. Idempotent. */
    @Override
    void close();
}
