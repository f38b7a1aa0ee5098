package io.pegaflow.node.remote;

import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.transfer.PeerId;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Lets one log line per peer through each minute, so that a peer whose every block arrives corrupted (a bad NIC, a
 * faulty owner) cannot fill the log; the metric counts every one. Peers are forgotten when more than
 * {@link #MAX_PEERS} are tracked.
 */
final class PeerLogLimiter {
    static final long INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(1);
    static final int MAX_PEERS = 4096;

    private final Map<PeerId, Long> last = new ConcurrentHashMap<>();
    private final NanoClock clock;

    PeerLogLimiter(NanoClock clock) {
        this.clock = clock;
    }

    /** Whether this is the first event of {@code peer} in its interval; exactly one caller wins a race for it. */
    boolean firstInInterval(PeerId peer) {
        long now = clock.nanoTime();
        if (last.size() >= MAX_PEERS && !last.containsKey(peer)) {
            last.clear();
        }
        boolean[] first = {false};
        last.compute(peer, (p, at) -> {
            if (at == null || now - at >= INTERVAL_NANOS) {
                first[0] = true;
                return now;
            }
            return at;
        });
        return first[0];
    }
}
