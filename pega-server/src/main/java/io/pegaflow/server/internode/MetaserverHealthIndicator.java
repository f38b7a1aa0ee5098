package io.pegaflow.server.internode;

import io.pegaflow.server.ssd.SsdHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * {@code metaserver} in {@code /actuator/health}: {@code UP} while the link to the cluster index works,
 * {@code DEGRADED} with the failing call (or the fencing) in the description otherwise, {@code UNKNOWN} before the
 * first answer. A lost metaserver costs peers their view of this node's blocks, never local Save, Query or Load, so
 * it does not take the server's overall status down (the same rule as a degraded SSD shard).
 */
public class MetaserverHealthIndicator implements HealthIndicator {
    private final MetaserverClient client;

    public MetaserverHealthIndicator(MetaserverClient client) {
        this.client = client;
    }

    @Override
    public Health health() {
        Health.Builder b = switch (client.link()) {
            case UP -> Health.up();
            case CONNECTING -> Health.unknown();
            case FAILING ->
                Health.status(new Status(
                        SsdHealthIndicator.DEGRADED,
                        "metaserver " + client.target() + " unreachable or refusing (" + client.lastFailure()
                                + "); announcements are dropped until it answers"));
            case FENCED ->
                Health.status(new Status(
                        SsdHealthIndicator.DEGRADED,
                        "fenced: another process took " + client.advertiseAddr()
                                + " over at the metaserver; restart this server to rejoin the cluster index"));
        };
        return b.withDetail("metaserver", client.target())
                .withDetail("node", client.advertiseAddr())
                .withDetail("nodeId", client.nodeId().toString())
                .withDetail("epoch", client.metaserverEpoch())
                .build();
    }
}
