package io.pegaflow.server.ssd;

import io.pegaflow.core.ssd.ShardStatus;
import io.pegaflow.core.ssd.SsdErrorKind;
import io.pegaflow.core.ssd.SsdStore;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * {@code ssd} in {@code /actuator/health}: {@code UP} while every shard is in service, otherwise {@code DEGRADED}
 * with a description naming each failed shard and why. The server keeps serving from RAM and the healthy shards, so a
 * degraded tier does not fail the overall status (an unknown code is ignored by the default aggregation; add
 * {@code DEGRADED} to {@code management.endpoint.health.status.order} to change that). Details list every shard.
 */
public class SsdHealthIndicator implements HealthIndicator {
    /** Some shard is out of service. */
    public static final String DEGRADED = "DEGRADED";

    private final SsdStore store;

    public SsdHealthIndicator(SsdStore store) {
        this.store = store;
    }

    @Override
    public Health health() {
        store.checkShardFiles();
        List<ShardStatus> shards = store.shardStatus();
        List<String> failures = new ArrayList<>();
        List<Map<String, Object>> details = new ArrayList<>();
        int healthy = 0;
        for (ShardStatus s : shards) {
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("id", s.id());
            d.put("path", s.path());
            d.put("healthy", s.healthy());
            d.put("usedBytes", s.usedBytes());
            d.put("capacityBytes", s.capacityBytes());
            d.put("entries", s.entries());
            if (s.healthy()) {
                healthy++;
            } else {
                // set for every unhealthy shard (written before healthy turns false); null only for healthy ones
                SsdErrorKind kind = s.failureKind();
                String reason = kind == null ? "unknown" : kind.label();
                String detail = Objects.requireNonNullElse(s.failureDetail(), "");
                d.put("reason", reason);
                d.put("detail", detail);
                failures.add("shard " + s.id() + " (" + s.path() + "): " + reason + ": " + detail);
            }
            details.add(d);
        }
        Health.Builder b =
                failures.isEmpty() ? Health.up() : Health.status(new Status(DEGRADED, String.join("; ", failures)));
        return b.withDetail("healthyShards", healthy + "/" + shards.size())
                .withDetail("entries", store.entryCount())
                .withDetail("shards", details)
                .build();
    }
}
