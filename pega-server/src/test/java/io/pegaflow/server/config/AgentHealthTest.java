package io.pegaflow.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.jayway.jsonpath.JsonPath;
import io.pegaflow.kernel.agent.Agent;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.AgentRunner;
import io.pegaflow.kernel.agent.IdleStrategy;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;
import org.springframework.test.annotation.DirtiesContext;

/**
 * A worker thread that dies fails loudly: the {@code agents} health component, the overall status and the liveness
 * probe turn DOWN (HTTP 503) and say which role died and why.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=16MB",
            "pega.device.backend=host"
        })
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AgentHealthTest {
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Autowired
    AgentGroup agents;

    @Autowired
    Environment env;

    private HttpResponse<String> get(String path) throws Exception {
        int port = Integer.parseInt(env.getProperty("local.server.port"));
        return HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void shouldTurnHealthAndLivenessDownWhenAWorkerDies() throws Exception {
        HttpResponse<String> before = get("/actuator/health/liveness");
        assertThat(before.statusCode()).isEqualTo(200);
        assertThat(before.body()).contains("\"agents\":{\"status\":\"UP\"}");

        AgentRunner runner = agents.add(new AgentRunner(new Dying(), IdleStrategy.parking(1_000_000)).start());
        await().atMost(Duration.ofSeconds(20)).until(() -> runner.state() == AgentRunner.State.FAILED);

        HttpResponse<String> health = get("/actuator/health");
        assertThat(health.statusCode()).isEqualTo(503);
        String body = health.body();
        assertThat((String) JsonPath.read(body, "$.status")).isEqualTo("DOWN");
        assertThat((String) JsonPath.read(body, "$.components.agents.status")).isEqualTo("DOWN");
        assertThat((String) JsonPath.read(body, "$.components.agents.description"))
                .contains("pega-test-dying")
                .contains("OutOfMemoryError: simulated");
        assertThat(get("/actuator/health/liveness").statusCode()).isEqualTo(503);
        runner.close();
    }

    /** Throws an Error out of its first duty cycle, as an out-of-memory sealing thread would. */
    private static final class Dying implements Agent {
        @Override
        public int doWork() {
            throw new OutOfMemoryError("simulated");
        }

        @Override
        public String roleName() {
            return "pega-test-dying";
        }
    }
}
