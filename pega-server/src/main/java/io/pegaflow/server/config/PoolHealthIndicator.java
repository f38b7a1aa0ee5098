package io.pegaflow.server.config;

import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.server.ssd.SsdHealthIndicator;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.stereotype.Component;

/**
 * {@code pool} in {@code /actuator/health} (and the reason in the plain {@code /health}): {@code DEGRADED} while the
 * last reclaiming allocation failed and none succeeded since, i.e. no Save can get pool memory because every block is
 * held by something eviction cannot touch (leases, transfer locks, loads in flight). Not part of readiness or
 * liveness: the server still answers every RPC, restarting it would drop the cache without freeing what its clients
 * hold, and a node taken out of rotation would leave its clients' leases and loads stranded.
 */
@Component("poolHealthIndicator")
public class PoolHealthIndicator implements HealthIndicator {
    private final PegaEngine engine;

    PoolHealthIndicator(PegaEngine engine) {
        this.engine = engine;
    }

    /** Why the pool counts as pinned, or null while the last allocation succeeded. */
    public static @Nullable String pinnedReason(PegaEngine engine) {
        long failures = engine.allocationFailuresSinceSuccess();
        if (failures == 0) {
            return null;
        }
        return failures + " pool allocations failed since the last one that succeeded: every block is held by a"
                + " lease, a transfer lock or a load in flight ("
                + engine.transferLockStats().lockedBytes()
                + " bytes under transfer locks); POST /cache/memory/cleanup breaks the locks";
    }

    @Override
    public Health health() {
        String reason = pinnedReason(engine);
        Health.Builder b =
                reason == null ? Health.up() : Health.status(new Status(SsdHealthIndicator.DEGRADED, reason));
        return b.withDetail("failedAllocationsSinceSuccess", engine.allocationFailuresSinceSuccess())
                .build();
    }
}
