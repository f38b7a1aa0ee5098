package io.pegaflow.server.state;

import io.pegaflow.core.engine.RestoreReport;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * {@code restore} in {@code /actuator/health} and the readiness group: {@code DOWN} until the journaled
 * registrations are re-opened (the gRPC port is not open yet either), then {@code UP} with what was restored and
 * dropped. Without {@code pega.state.dir} it is {@code UP} with {@code journal: off}.
 */
final class RestoreHealthIndicator implements HealthIndicator {
    private final JournalRestore restore;

    RestoreHealthIndicator(JournalRestore restore) {
        this.restore = restore;
    }

    @Override
    public Health health() {
        if (!restore.journaling()) {
            return Health.up().withDetail("journal", "off").build();
        }
        if (restore.state() != JournalRestore.State.DONE) {
            return Health.down()
                    .withDetail("reason", "restoring journaled registrations")
                    .withDetail("journaled", restore.journaled())
                    .build();
        }
        RestoreReport r = restore.report();
        return Health.up()
                .withDetail("restored", r.restored())
                .withDetail("dropped", r.dropped())
                .withDetail("layers", r.layers())
                .withDetail("millis", r.nanos() / 1_000_000.0)
                .build();
    }
}
