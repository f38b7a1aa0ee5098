package io.pegaflow.server.config;

import io.pegaflow.kernel.agent.AgentGroup;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * {@code agents} in {@code /actuator/health} and the liveness group: {@code UP} while every worker thread of the
 * engine, its tiers and the cluster client runs, {@code DOWN} as soon as one died (an exception escaped its duty
 * cycle), with the role and the exception in the description. A dead sealing, SSD or device-lane thread means work
 * silently stops being done, so unlike a degraded SSD shard it takes the server down: the process must be restarted.
 * An agent stuck in one duty cycle past {@link io.pegaflow.kernel.agent.AgentRunner#STALL_THRESHOLD_NANOS} (a native
 * wait that never returns) is DOWN for the same reason, named with how long it has been stuck (decision 0016).
 * Details map each role to its state.
 */
class AgentHealthIndicator implements HealthIndicator {
    private final AgentGroup agents;

    AgentHealthIndicator(AgentGroup agents) {
        this.agents = agents;
    }

    @Override
    public Health health() {
        List<AgentGroup.Status> statuses = agents.statuses();
        Map<String, Object> states = new LinkedHashMap<>();
        for (AgentGroup.Status s : statuses) {
            states.merge(s.roleName(), s.state().name(), (a, b) -> a + "," + b);
        }
        List<AgentGroup.Status> failed =
                statuses.stream().filter(AgentGroup.Status::failed).toList();
        List<AgentGroup.Status> stalled =
                statuses.stream().filter(AgentGroup.Status::stalled).toList();
        Health.Builder b;
        if (!failed.isEmpty()) {
            b = Health.status(new Status(
                    Status.DOWN.getCode(),
                    "worker thread died, restart the server: "
                            + failed.stream()
                                    .map(s -> s.roleName() + " (" + s.failure() + ")")
                                    .collect(Collectors.joining("; "))));
        } else if (!stalled.isEmpty()) {
            b = Health.status(new Status(
                    Status.DOWN.getCode(),
                    "worker thread stuck in one step, restart the server: "
                            + stalled.stream()
                                    .map(s -> s.roleName() + " (busy " + TimeUnit.NANOSECONDS.toSeconds(s.busyNanos())
                                            + " s)")
                                    .collect(Collectors.joining("; "))));
        } else {
            b = Health.up();
        }
        return b.withDetail("agents", states).build();
    }
}
