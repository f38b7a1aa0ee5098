package io.pegaflow.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.StatusRuntimeException;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.edge.metrics.MetricReading;
import io.pegaflow.edge.metrics.MetricsView;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.server.transfer.TransferMeters;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.PushClient;
import io.pegaflow.transfer.PeerId;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A server with every subsystem that has meters (engine, SSD tier, metaserver client; the metaserver itself need not
 * answer) exports exactly its catalog: every entry is registered and scraped under its documented name, and no
 * {@code pegaflow_*} meter exists outside the catalog.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=16MB",
            "pega.device.backend=host",
            "pega.ssd.enabled=true",
            "pega.ssd.capacity=8MB",
            "pega.metaserver.advertise-addr=127.0.0.1:50055",
            "pega.metaserver.allow-loopback=true",
            "pega.pd.enabled=true",
            "pega.pd.transports=tcp",
            "pega.rdma.enabled=true",
            "pega.rdma.nics=lo",
            "pega.rdma.transports=tcp"
        })
class MetricCatalogTest {
    private static final Path DIR = shardDir();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Autowired
    MeterRegistry registry;

    @Autowired
    MetricsView view;

    @Autowired
    GrpcPort grpcPort;

    @Autowired
    PegaEngine engine;

    @Autowired
    Environment env;

    @Autowired
    TransferMeters transferMeters;

    private static Path shardDir() {
        try {
            return Files.createTempDirectory("pega-metric-catalog");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @DynamicPropertySource
    static void subsystems(DynamicPropertyRegistry r) {
        r.add("pega.ssd.paths[0]", () -> DIR.resolve("a").toString());
        r.add("pega.metaserver.addr", () -> "http://127.0.0.1:" + unusedPort());
    }

    private static int unusedPort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @AfterAll
    static void removeShards() throws IOException {
        try (Stream<Path> files = Files.walk(DIR)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private void callOnce() {
        transferMeters.peerSeen(new PeerId("127.0.0.1:1")); // a peer's series appear at its first handshake
        try (MockScheduler scheduler = MockScheduler.connect("127.0.0.1", grpcPort.port())) {
            scheduler.health();
        }
        // the PdPush RPC series appear at a PdPush call, as the engine's appear at an engine call
        try (PushClient push = PushClient.connect("127.0.0.1", grpcPort.port(), Duration.ofSeconds(10))) {
            push.cancelReceive(1);
        } catch (StatusRuntimeException e) {
            // FAILED_PRECONDITION (no such receive) is counted like a success
        }
    }

    @Test
    void shouldRegisterEveryCatalogEntryAndNothingElse() {
        callOnce();

        Set<String> catalog =
                Stream.of(ServerMetric.values()).map(ServerMetric::meterName).collect(Collectors.toSet());
        Set<String> registered = registry.getMeters().stream()
                .map(Meter::getId)
                .map(Meter.Id::getName)
                .filter(name -> name.startsWith("pegaflow"))
                .collect(Collectors.toSet());

        assertThat(registered).as("pegaflow meters outside the catalog").isSubsetOf(catalog);
        assertThat(catalog).as("catalog entries never registered").isSubsetOf(registered);
        assertThat(registry.getMeters())
                .as("RPCs are timed once, by pegaflow_rpc_*: Spring gRPC's per-call observation is off")
                .noneMatch(m -> m.getId().getName().startsWith("grpc.server"));
    }

    @Test
    void shouldScrapeEveryEntryUnderItsDocumentedName() throws Exception {
        callOnce();
        String scrape = HTTP.send(
                        HttpRequest.newBuilder(URI.create(
                                        "http://127.0.0.1:" + env.getProperty("local.server.port") + "/metrics"))
                                .timeout(Duration.ofSeconds(10))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        Set<String> samples = scrape.lines()
                .filter(l -> l.startsWith("pegaflow"))
                .map(l -> l.split("[{ ]", 2)[0])
                .collect(Collectors.toSet());
        Set<String> allowed = Stream.of(ServerMetric.values())
                .flatMap(m -> m.sampleNames().stream())
                .collect(Collectors.toSet());

        assertThat(samples).isSubsetOf(allowed);
        for (ServerMetric metric : ServerMetric.values()) {
            assertThat(samples)
                    .as(metric.seriesName())
                    .contains(metric.sampleNames().get(0));
        }
    }

    @Test
    void shouldReadEveryEntryThroughTheView() {
        callOnce();

        List<MetricReading> readings = view.read();

        assertThat(readings)
                .extracting(MetricReading::name)
                .containsAll(Stream.of(ServerMetric.values())
                        .map(ServerMetric::seriesName)
                        .toList());
        assertThat(view.read(ServerMetric.PEGAFLOW_POOL_CAPACITY_BYTES))
                .singleElement()
                .satisfies(r ->
                        assertThat(r.value()).isEqualTo((double) engine.pool().capacityBytes()));
        assertThat(view.read(ServerMetric.PEGAFLOW_RPC_REQUESTS)).anySatisfy(r -> {
            assertThat(r.labels()).containsEntry("method", "health").containsEntry("status", "ok");
            assertThat(r.value()).isPositive();
        });
    }
}
