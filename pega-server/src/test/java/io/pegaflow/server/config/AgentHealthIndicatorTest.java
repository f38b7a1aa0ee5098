package io.pegaflow.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.kernel.agent.Agent;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.AgentRunner;
import io.pegaflow.kernel.agent.IdleStrategy;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/** An agent stuck in one step (a native wait that never returns) turns the agents health DOWN, named. */
@Timeout(30)
class AgentHealthIndicatorTest {
    @Test
    void shouldNameAnAgentStuckPastTheStallThreshold() throws InterruptedException {
        AtomicLong now = new AtomicLong();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AgentGroup agents = new AgentGroup();
        AgentRunner runner = agents.add(new AgentRunner(
                        new Agent() {
                            @Override
                            public int doWork() {
                                entered.countDown();
                                try {
                                    release.await(20, TimeUnit.SECONDS);
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                }
                                return 0;
                            }

                            @Override
                            public String roleName() {
                                return "pega-test-ssd-io";
                            }
                        },
                        IdleStrategy.parking(1_000_000),
                        now::get)
                .start());
        AgentHealthIndicator health = new AgentHealthIndicator(agents);
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(health.health().getStatus()).isEqualTo(Status.UP);

        now.addAndGet(AgentRunner.STALL_THRESHOLD_NANOS + TimeUnit.SECONDS.toNanos(5));
        Health stuck = health.health();
        assertThat(stuck.getStatus().getCode()).isEqualTo("DOWN");
        assertThat(stuck.getStatus().getDescription()).contains("stuck").contains("pega-test-ssd-io (busy 65 s)");

        release.countDown();
        assertThat(runner.close(10, TimeUnit.SECONDS)).isTrue();
        agents.remove(runner);
        assertThat(health.health().getStatus()).isEqualTo(Status.UP);
    }
}
