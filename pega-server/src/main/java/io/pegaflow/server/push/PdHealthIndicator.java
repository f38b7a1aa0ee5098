package io.pegaflow.server.push;

import io.pegaflow.push.PushEngine;
import io.pegaflow.server.ssd.SsdHealthIndicator;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.stereotype.Component;

/**
 * {@code pd} in {@code /actuator/health} (and the reason in the plain {@code /health}): {@code DEGRADED} while every
 * push request slot is held, or one principal holds its whole share of them, so that some tenant's next
 * {@code PrepareReceive} or {@code StartPush} is refused (decision 0031 §4). Not part of readiness or liveness, as the
 * pool's: the server still answers, and the slots come back as the receives end or time out.
 */
@Component("pdHealthIndicator")
@ConditionalOnProperty(name = "pega.pd.enabled", havingValue = "true")
public class PdHealthIndicator implements HealthIndicator {
    private final PushEngine push;

    PdHealthIndicator(PushEngine push) {
        this.push = push;
    }

    @Override
    public Health health() {
        String reason = push.slotSaturation();
        return reason == null
                ? Health.up().build()
                : Health.status(new Status(SsdHealthIndicator.DEGRADED, reason)).build();
    }
}
