package io.pegaflow.server.internode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.jayway.jsonpath.JsonPath;
import io.grpc.Status;
import io.pegaflow.testkit.ChildJvm;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The {@code metaserver} health component follows the link: UP while calls go through, DEGRADED with the failing call
 * while the metaserver refuses, UP again once it answers, DEGRADED with the fencing advice once the node_id is fenced;
 * the server's overall status stays UP throughout, because local caching never depends on the metaserver.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=16MB",
            "pega.device.backend=host",
            "pega.metaserver.advertise-addr=127.0.0.1:50055",
            "pega.metaserver.allow-loopback=true",
            "pega.metaserver.heartbeat-interval=100ms"
        })
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetaserverHealthTest {
    static final Duration WAIT = Duration.ofSeconds(20);
    static final FakeMetaServer METASERVER = MetaserverAnnouncementTest.start();

    @Autowired
    Environment env;

    @Autowired
    MetaserverClient client;

    @DynamicPropertySource
    static void metaserver(DynamicPropertyRegistry registry) {
        registry.add("pega.metaserver.addr", () -> METASERVER.target());
    }

    @AfterAll
    static void stopMetaserver() {
        METASERVER.close();
    }

    private String health() {
        return ChildJvm.httpGet(Integer.parseInt(env.getProperty("local.server.port")), "/actuator/health");
    }

    private String component(String field) {
        return JsonPath.read(health(), "$.components.metaserver." + field);
    }

    @Test
    void shouldFollowTheLinkWithoutTakingTheServerDown() {
        await().atMost(WAIT).until(() -> "UP".equals(component("status")));

        METASERVER.failure = Status.UNAVAILABLE.withDescription("maintenance");
        await().atMost(WAIT).until(() -> "DEGRADED".equals(component("status")));
        assertThat(component("description"))
                .isEqualTo("metaserver " + METASERVER.target() + " unreachable or refusing (HeartbeatNode:"
                        + " UNAVAILABLE: maintenance); announcements are dropped until it answers");
        assertThat((String) JsonPath.read(health(), "$.status")).isEqualTo("UP");

        METASERVER.failure = null;
        await().atMost(WAIT).until(() -> "UP".equals(component("status")));

        METASERVER.fenced.add(client.nodeId().toString());
        await().atMost(WAIT).until(() -> "DEGRADED".equals(component("status")));
        assertThat(component("description"))
                .isEqualTo("fenced: another process took 127.0.0.1:50055 over at the metaserver; restart this server"
                        + " to rejoin the cluster index");
        assertThat((String) JsonPath.read(health(), "$.status")).isEqualTo("UP");
    }
}
