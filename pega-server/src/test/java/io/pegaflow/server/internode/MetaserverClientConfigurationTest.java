package io.pegaflow.server.internode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.pegaflow.core.engine.BlockIndexListener;
import io.pegaflow.edge.access.ClusterChannels;
import io.pegaflow.edge.access.ClusterCredential;
import io.pegaflow.server.metrics.MetricsConfiguration;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * When the client exists and which advertise addresses it refuses: peers dial the advertised address, so a wildcard
 * never passes and loopback passes only with {@code allow-loopback} (single-host tests).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetaserverClientConfigurationTest {

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(MetaserverClientProperties.class)
    static class Properties {
        @Bean
        SimpleMeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        /** What ClusterConfiguration makes without a token or an SSL bundle. */
        @Bean
        ClusterChannels clusterChannels() {
            return ClusterChannels.plaintext(ClusterCredential.of(""));
        }
    }

    /** Stands in for the engine, which implements {@link BlockIndexListener.ResidentBlocks}. */
    @Configuration(proxyBeanMethods = false)
    static class Engine {
        @Bean
        BlockIndexListener.ResidentBlocks residentBlocks() {
            List<byte[]> hashes = List.of(
                    ByteBuffer.allocate(32).putInt(1).array(),
                    ByteBuffer.allocate(32).putInt(2).array());
            return (batchSize, sink) -> sink.onSealed("ns", hashes);
        }
    }

    final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withUserConfiguration(Properties.class, MetaserverClientConfiguration.class, MetricsConfiguration.class)
            .withPropertyValues("pega.metaserver.rpc-timeout=1s");

    static String rootMessage(Throwable failure) {
        Throwable cause = failure;
        while (cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause.getMessage();
    }

    @Test
    void shouldCreateNoClientWithoutAMetaserverAddress() {
        runner.run(context -> assertThat(context).doesNotHaveBean(MetaserverClient.class));
        runner.withPropertyValues("pega.metaserver.addr=")
                .run(context -> assertThat(context).doesNotHaveBean(MetaserverClient.class));
    }

    @Test
    void shouldStartWithARoutableAdvertiseAddressEvenWithoutAnEngine() {
        runner.withPropertyValues(
                        "pega.metaserver.addr=http://127.0.0.1:1", "pega.metaserver.advertise-addr=10.0.0.5:50055")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).hasSingleBean(BlockIndexListener.class);
                    assertThat(context).hasSingleBean(MeterBinder.class);
                    SimpleMeterRegistry registry = new SimpleMeterRegistry();
                    context.getBean(MeterBinder.class).bindTo(registry);
                    assertThat(registry.find("pegaflow_metaserver_registration_blocks")
                                    .functionCounter())
                            .as("the client's counters are bound without an engine")
                            .isNotNull();
                    assertThat(context.getBean(MetaserverClient.class).advertiseAddr())
                            .isEqualTo("10.0.0.5:50055");
                });
    }

    @Test
    void shouldRefuseLoopbackUnlessAllowed() {
        runner.withPropertyValues(
                        "pega.metaserver.addr=127.0.0.1:1",
                        "spring.grpc.server.host=127.0.0.1",
                        "spring.grpc.server.port=50055")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(rootMessage(context.getStartupFailure()))
                            .startsWith("pega.metaserver.advertise-addr: 127.0.0.1:50055 (expected: a routable"
                                    + " ip:port; other nodes cannot reach loopback");
                });
        runner.withPropertyValues(
                        "pega.metaserver.addr=127.0.0.1:1",
                        "pega.metaserver.advertise-addr=127.0.0.1:50055",
                        "pega.metaserver.allow-loopback=true")
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void shouldRefuseWildcardAndEphemeralAdvertiseAddressesAlways() {
        for (String advertise : new String[] {"0.0.0.0:50055", "[::]:50055", "10.0.0.5:0", "10.0.0.5"}) {
            runner.withPropertyValues(
                            "pega.metaserver.addr=127.0.0.1:1",
                            "pega.metaserver.advertise-addr=" + advertise,
                            "pega.metaserver.allow-loopback=true")
                    .run(context -> {
                        assertThat(context).hasFailed();
                        assertThat(rootMessage(context.getStartupFailure()))
                                .as(advertise)
                                .startsWith("pega.metaserver.advertise-addr: " + advertise + " (expected:");
                    });
        }
    }

    @Test
    void shouldParseTheReferenceMetaserverUriForm() {
        assertThat(Addresses.metaserverTarget("http://10.0.0.100:50056")).isEqualTo("10.0.0.100:50056");
        assertThat(Addresses.metaserverTarget("meta.internal:50056")).isEqualTo("meta.internal:50056");
        assertThat(Addresses.metaserverTarget("dns:///meta.internal:50056")).isEqualTo("dns:///meta.internal:50056");
        assertThatThrownBy(() -> Addresses.metaserverTarget("https://10.0.0.100:50056"))
                .hasMessageContaining("TLS is not supported");
        assertThatThrownBy(() -> Addresses.metaserverTarget("10.0.0.100"))
                .hasMessage("pega.metaserver.addr: 10.0.0.100 (expected: host:port, e.g. http://10.0.0.100:50056)");
    }

    @Test
    void shouldAcceptSeveralMetaserverAddressesForFailover() {
        assertThat(Addresses.metaserverTargets("http://10.0.0.100:50056, 10.0.0.101:50056"))
                .isEqualTo("10.0.0.100:50056,10.0.0.101:50056");
        assertThat(Addresses.metaserverTargets("10.0.0.100:50056")).isEqualTo("10.0.0.100:50056");
        assertThatThrownBy(() -> Addresses.metaserverTargets("10.0.0.100:50056,,10.0.0.101:50056"))
                .hasMessage("pega.metaserver.addr: 10.0.0.100:50056,,10.0.0.101:50056 (expected: host:port, or several"
                        + " separated by commas, without empty entries)");
        assertThatThrownBy(() -> Addresses.metaserverTargets("10.0.0.100:50056,10.0.0.101"))
                .hasMessage("pega.metaserver.addr: 10.0.0.101 (expected: host:port, e.g. http://10.0.0.100:50056)");
    }

    @Test
    void shouldAnnounceTheEnginesResidentBlocksOnFirstContact() throws Exception {
        try (FakeMetaServer metaserver = new FakeMetaServer()) {
            runner.withUserConfiguration(Engine.class)
                    .withPropertyValues(
                            "pega.metaserver.addr=" + metaserver.target(),
                            "pega.metaserver.advertise-addr=10.0.0.5:50055",
                            "pega.metaserver.heartbeat-interval=200ms")
                    .run(context -> {
                        await().atMost(Duration.ofSeconds(10)).until(() -> metaserver.blocks.size() == 2);
                        assertThat(metaserver.sessions)
                                .containsEntry(
                                        "10.0.0.5:50055",
                                        context.getBean(MetaserverClient.class)
                                                .nodeId()
                                                .toString());
                    });
            // Closing the context closed the client, which unregistered.
            assertThat(metaserver.unregistered).hasSize(1);
        }
    }
}
