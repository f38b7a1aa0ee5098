package io.pegaflow.server.internode;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/** Settings of one client; {@code heartbeatInterval} null follows the metaserver's stale_after / 2. */
public record MetaserverClientSettings(
        String target,
        String advertiseAddr,
        int queueDepth,
        @Nullable Duration heartbeatInterval,
        Duration rpcTimeout,
        int batchSize,
        Duration initialBackoff,
        Duration maxBackoff) {

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
