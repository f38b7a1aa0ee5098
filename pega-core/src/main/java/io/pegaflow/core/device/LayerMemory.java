package io.pegaflow.core.device;

/**
 * One registered layer tensor as seen by this process: a base address and the byte size of its storage (the reference's
 * P and S).
 *
 * <p>Several layers may share one underlying mapping; each {@code LayerMemory} holds one reference to it and
 * {@link #close()} gives that reference back exactly once (later calls do nothing). The engine closes a layer only
 * after every copy that used it has drained.
 */
public interface LayerMemory extends AutoCloseable {

    /** Address of byte 0 of the tensor in this process (P). */
    long baseAddress();

    /** Size of the tensor's storage in bytes (S). */
    long sizeBytes();

    @Override
    void close();
}
