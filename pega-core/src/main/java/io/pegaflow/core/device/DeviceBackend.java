package io.pegaflow.core.device;

/**
 * Moves KV bytes between a worker's device memory and the pinned pool. Two implementations exist: {@code host}
 * (device memory is a POSIX shared-memory object, copies done by the kernel) and {@code cuda} (CUDA IPC mappings,
 * DMA on per-lane streams).
 *
 * <p>Thread-safety: {@link #openLayer} may be called from any thread. Each {@link DeviceCopier} is driven by the two
 * lane threads of one (instance, device) context.
 *
 * <p>Ownership: the engine owns the backend and closes it last, after every copier and layer mapping is closed.
 */
public interface DeviceBackend extends AutoCloseable {

    /** {@code "host"} or {@code "cuda"}: the value reported by health and metrics. */
    String name();

    /**
     * Maps the memory that {@code wrapperBytes} describes on device {@code deviceId}, for {@code caller}.
     *
     * @throws io.pegaflow.core.error.EngineException INVALID_ARGUMENT for a descriptor this backend does not accept
     *     (a hostile path, a range past the end, a pickle on a host-only server, memory that is not the caller's),
     *     INTERNAL when mapping fails
     */
    LayerMemory openLayer(Caller caller, int deviceId, byte[] wrapperBytes);

    /** Creates the copy engine for one (instance, device) context. */
    DeviceCopier openCopier(int deviceId);

    /** Releases backend-wide resources (contexts, pool registration). Idempotent. */
    @Override
    void close();
}
