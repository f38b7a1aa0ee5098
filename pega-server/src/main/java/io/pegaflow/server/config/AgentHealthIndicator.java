package io.pegaflow.server.config;

import io.pegaflow.core.agent.AgentGroup;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * {@code agents} in {@code /actuator/health} and the liveness group: {@code UP} while every worker thread of the
 * engine, its tiers and the cluster client runs, {@code DOWN} as soon as one died (an exception escaped its duty
 * cycle), with the role and the exception in the description. A dead sealing, SSD or device-lane thread means work
 * silently stops being done, so unlike a degraded SSD shard it takes the server down: the process must be restarted.
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
        Health.Builder b = failed.isEmpty()
                ? Health.up()
                : Health.status(new Status(
                        Status.DOWN.getCode(),
                        "worker thread died, restart the server: "
                                + failed.stream()
                                        .map(s -> s.roleName() + " (" + s.failure() + ")")
                                        .collect(Collectors.joining("; "))));
        return b.withDetail("agents", states).build();
    }
}
