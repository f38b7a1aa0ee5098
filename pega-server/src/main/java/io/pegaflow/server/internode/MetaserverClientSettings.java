package io.pegaflow.server.internode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Settings of one client; {@code heartbeatInterval} null follows the metaserver's stale_after / 2. {@code target} is
 * one gRPC target or several separated by commas, tried in order on failover ({@link MetaserverEndpoints}).
 */
public record MetaserverClientSettings(
        String target,
        String advertiseAddr,
        int queueDepth,
        @Nullable Duration heartbeatInterval,
        Duration rpcTimeout,
        int batchSize,
        Duration initialBackoff,
        Duration maxBackoff) {

    /** The addresses of {@code target}, in order. */
    public List<String> targets() {
        List<String> targets = new ArrayList<>();
        for (String part : target.split(",", -1)) {
            if (!part.isBlank()) {
                targets.add(part.trim());
            }
        }
        return targets;
    }

    /** The reference's backoff: 100 ms doubling to 30 s. */
    public static MetaserverClientSettings of(
            String target,
            String advertiseAddr,
            int queueDepth,
            @Nullable Duration heartbeatInterval,
            Duration rpcTimeout,
            int batchSize) {
        return new MetaserverClientSettings(
                target,
                advertiseAddr,
                queueDepth,
                heartbeatInterval,
                rpcTimeout,
                batchSize,
                Duration.ofMillis(100),
                Duration.ofSeconds(30));
    }
}
