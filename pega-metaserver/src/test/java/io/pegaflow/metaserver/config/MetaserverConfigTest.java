package io.pegaflow.metaserver.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.metaserver.MetaserverApplication;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.SpringApplication;
import org.springframework.mock.env.MockEnvironment;

/** Startup validation of {@code pega.metaserver.*} and the mapping of the reference's address flags. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class MetaserverConfigTest {

    static MetaserverProperties props(long staleSecs, long ttlMinutes, long sweepSecs) {
        return new MetaserverProperties(
                "127.0.0.1:50056",
                "0.0.0.0:9092",
                staleSecs,
                ttlMinutes,
                sweepSecs,
                "db",
                10,
                10,
                10,
                10,
                1,
                0,
                0.25,
                "memory",
                new MetaserverProperties.Redis("redis://127.0.0.1:6379", List.of(), 2000),
                new MetaserverProperties.Calls(0, 0, 4096, 500));
    }

    @Test
    void shouldApplyTheReferenceStartupChecks() {
        assertThat(props(0, 1, 1).staleAfterMs()).isZero(); // accepted: every node stale right after its last touch
        assertThatThrownBy(() -> props(30, 0, 600)).hasMessage("pega.metaserver.ttl-minutes: 0 (expected: > 0)");
        assertThatThrownBy(() -> props(30, 120, 0))
                .hasMessage("pega.metaserver.sweep-interval-secs: 0 (expected: > 0)");
        assertThatThrownBy(() -> props(61, 1, 600))
                .hasMessage("pega.metaserver.ttl-minutes: 1 (expected: ttl-minutes * 60 >= node-stale-secs (61))");
        assertThatThrownBy(() -> props(30, Long.MAX_VALUE / 60, 600))
                .hasMessageStartingWith("pega.metaserver.ttl-minutes");
    }

    @Test
    void shouldMapTheReferenceAddressFlagsOntoSpringsServers() {
        MockEnvironment env = new MockEnvironment()
                .withProperty("pega.metaserver.addr", "0.0.0.0:50056")
                .withProperty("pega.metaserver.http-addr", "[::1]:9192");
        new AddressEnvironmentPostProcessor()
                .postProcessEnvironment(env, new SpringApplication(MetaserverApplication.class));

        assertThat(env.getProperty("spring.grpc.server.address")).isEqualTo("0.0.0.0:50056");
        assertThat(env.getProperty("server.address")).isEqualTo("::1");
        assertThat(env.getProperty("server.port")).isEqualTo("9192");
    }

    @Test
    void shouldLeaveExplicitSpringSettingsAndOtherApplicationsAlone() {
        MockEnvironment explicit = new MockEnvironment()
                .withProperty("spring.grpc.server.port", "0")
                .withProperty("server.port", "0");
        new AddressEnvironmentPostProcessor()
                .postProcessEnvironment(explicit, new SpringApplication(MetaserverApplication.class));
        assertThat(explicit.getProperty("spring.grpc.server.address")).isNull();
        assertThat(explicit.getProperty("server.port")).isEqualTo("0");

        MockEnvironment other = new MockEnvironment();
        new AddressEnvironmentPostProcessor().postProcessEnvironment(other, new SpringApplication(Object.class));
        assertThat(other.getProperty("server.port")).isNull();
    }

    @Test
    void shouldRejectAMalformedHttpAddress() {
        MockEnvironment env = new MockEnvironment().withProperty("pega.metaserver.http-addr", "9092");
        assertThatThrownBy(() -> new AddressEnvironmentPostProcessor()
                        .postProcessEnvironment(env, new SpringApplication(MetaserverApplication.class)))
                .hasMessage("pega.metaserver.http-addr: 9092 (expected: host:port, e.g. 0.0.0.0:9092)");
    }
}
