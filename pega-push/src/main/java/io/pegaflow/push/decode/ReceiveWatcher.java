package io.pegaflow.push.decode;

/**
 * A prefill server's WatchReceive stream on the decode side. {@link #ended} may be called more than once (the agent
 * and a late registration can both see the end) and from any thread; implementations answer once.
 */
public interface ReceiveWatcher {
    /** The receive ended: every rank's layers are on the device ({@code succeeded}), or it failed for {@code reason}. */
    void ended(boolean succeeded, String reason);
}
