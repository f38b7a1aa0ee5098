package io.pegaflow.transfer.lane;

import io.pegaflow.transfer.HandshakeDescriptor;
import io.pegaflow.transfer.RegisteredRegion;
import java.util.List;

/**
 * What a data plane gives {@link LaneEngine}: its lanes, the local half of the handshake, and the release of what it
 * holds outside the lanes (registered memory, the context). Built fully before the engine starts; the engine owns it
 * from then on.
 */
public interface Fabric {
    HandshakeDescriptor.Fabric kind();

    /** Random per instance; goes into the descriptor. */
    long instanceId();

    List<String> nics();

    /** The transport list asked for, empty when the fabric chose. */
    String transports();

    /** The regions peers may address, sorted by base, with their packed remote keys. */
    List<RegisteredRegion> regions();

    /** One lane per connection to a peer; lane {@code i}'s address is {@link Lane#address()}. */
    List<? extends Lane<?>> lanes();

    /**
     * Releases registered memory and the context. Called once, after every lane's loop has ended (and so every endpoint
     * and worker is closed).
     */
    void release();

    /**
     * Called instead of {@link #release()} when a lane did not stop: releasing memory or the context under a live
     * endpoint aborts the process, so the fabric must leak them and say so.
     */
    void abandon();
}
