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

    /**
     * Creates, ahead of the first Save, what this context's save lane would otherwise create during it (streams,
     * descriptor buffers, submitting threads), sized for a plan of up to {@code ranges} ranges of {@code bytes} in all.
     * Called once, on the save lane thread, when the context starts; a failure here is not a failed registration (the
     * copy creates what is missing), so an implementation reports it and returns. Nothing to prepare by default.
     */
    default void prepareToHost(long ranges, long bytes) {}

    /** As {@link #prepareToHost}, for the load lane, on its thread. */
    default void prepareToDevice(long ranges, long bytes) {}

    /** Frees per-context resources (streams). Called after both lanes have drained. Idempotent. */
    @Override
    void close();
}
