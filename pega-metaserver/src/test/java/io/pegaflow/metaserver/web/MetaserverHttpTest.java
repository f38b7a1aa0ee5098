package io.pegaflow.metaserver.web;

import static io.pegaflow.metaserver.grpc.Requests.h;
import static io.pegaflow.metaserver.grpc.Requests.heartbeat;
import static io.pegaflow.metaserver.grpc.Requests.insert;
import static io.pegaflow.metaserver.grpc.Requests.query;
import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.edge.metrics.MetricsView;
import io.pegaflow.metaserver.metrics.MetaserverMetric;
import io.pegaflow.metaserver.node.NodeIdFingerprint;
import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.Http;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import io.pegaflow.proto.MetaServerGrpc.MetaServerBlockingStub;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/** The HTTP side: reference health and metrics paths, actuator, and the JSON node list for the admin UI. */
@Tag("integration")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetaserverHttpTest {

    @TempDir
    static Path dir;

    final AdjustableClock clock = new AdjustableClock();
    MetaserverTestApp app;
    final UUID live = UUID.randomUUID();
    final UUID fenced = UUID.randomUUID();
    final UUID successor = UUID.randomUUID();

    @BeforeAll
    void start() {
        app = MetaserverTestApp.start(dir, clock);
        MetaServerBlockingStub stub = app.stub();
        stub.heartbeatNode(heartbeat("10.7.0.2:50055", fenced));
        stub.insertBlockHashes(insert("ns", "10.7.0.2:50055", fenced, h(1)));
        clock.advance(Duration.ofSeconds(40));
        stub.heartbeatNode(heartbeat("10.7.0.2:50055", successor)); // takeover, then it goes quiet
        clock.advance(Duration.ofSeconds(40));
        stub.heartbeatNode(heartbeat("10.7.0.1:50055", live));
        stub.insertBlockHashes(insert("ns", "10.7.0.1:50055", live, h(1), h(2), h(3)));
        stub.queryPrefixBlocks(query("ns", h(1), h(2)));
    }

    @AfterAll
    void stop() {
        if (app != null) {
            app.close();
        }
    }

    @Test
    void shouldAnswerTheReferenceHealthProbe() throws Exception {
        HttpResponse<String> health = Http.get(app.httpBase() + "/health");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).isEqualTo("ok");
        assertThat(Http.get(app.httpBase() + "/actuator/health").body()).contains("\"UP\"");
    }

    @Test
    void shouldExportPrometheusMetricsWithTheReferenceNames() throws Exception {
        HttpResponse<String> metrics = Http.get(app.httpBase() + "/metrics");
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/plain");
        assertThat(metrics.body())
                .contains("pegaflow_metaserver_rpc_requests_total{method=\"insert_block_hashes\",status=\"ok\"} 2")
                .contains("pegaflow_metaserver_rpc_requests_total{method=\"query_prefix_blocks\",status=\"ok\"} 1")
                .contains("pegaflow_metaserver_rpc_duration_seconds_bucket{method=\"heartbeat_node\"")
                .contains("pegaflow_metaserver_nodes{state=\"active\"} 1")
                .contains("pegaflow_metaserver_nodes{state=\"stale\"} 1")
                .contains("pegaflow_metaserver_store_entries 3")
                .contains("pegaflow_metaserver_block_owners 4")
                .contains("pegaflow_metaserver_takeovers_total 1")
                .containsPattern("pegaflow_metaserver_epoch [0-9.E]+");
        assertThat(Http.get(app.httpBase() + "/actuator/prometheus").body()).contains("pegaflow_metaserver_nodes");
    }

    @Test
    void shouldExportExactlyTheCatalog() throws Exception {
        Set<String> samples = Http.get(app.httpBase() + "/metrics")
                .body()
                .lines()
                .filter(l -> l.startsWith("pegaflow"))
                .map(l -> l.split("[{ ]", 2)[0])
                .collect(Collectors.toSet());
        Set<String> allowed = Stream.of(MetaserverMetric.values())
                .flatMap(m -> m.sampleNames().stream())
                .collect(Collectors.toSet());

        assertThat(samples).as("pegaflow samples outside the catalog").isSubsetOf(allowed);
        for (MetaserverMetric metric : MetaserverMetric.values()) {
            assertThat(samples)
                    .as(metric.seriesName())
                    .contains(metric.sampleNames().get(0));
        }
        MetricsView view = app.bean(MetricsView.class);
        assertThat(view.read(MetaserverMetric.PEGAFLOW_METASERVER_STORE_ENTRIES))
                .singleElement()
                .satisfies(r -> assertThat(r.value()).isEqualTo(3));
    }

    @Test
    void shouldListNodesWithLivenessAndFencing() throws Exception {
        HttpResponse<String> response = Http.get(app.httpBase() + "/api/nodes");
        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode doc = new ObjectMapper().readTree(response.body());

        // A fresh database starts its epoch at the start's wall-clock millisecond, so a wiped one never repeats one.
        assertThat(doc.get("epoch").asLong())
                .isEqualTo(Instant.parse(doc.get("epochStartedAt").asString()).toEpochMilli());
        assertThat(doc.get("staleAfterSecs").asLong()).isEqualTo(30);
        List<String> summary = new ArrayList<>();
        for (JsonNode node : doc.get("nodes")) {
            summary.add(node.get("node").asString() + " "
                    + node.get("nodeIdFingerprint").asString() + " "
                    + node.get("state").asString() + " blocks="
                    + node.get("ownedBlocks").asLong() + " takeovers="
                    + node.get("takeovers").asLong() + " fenced=" + node.get("fencedNodeIdFingerprints"));
        }
        assertThat(summary)
                .containsExactly(
                        "10.7.0.1:50055 " + NodeIdFingerprint.of(live) + " live blocks=3 takeovers=0 fenced=[]",
                        "10.7.0.2:50055 " + NodeIdFingerprint.of(successor) + " stale blocks=0 takeovers=1 fenced=[\""
                                + NodeIdFingerprint.of(fenced) + "\"]");
        JsonNode fence = doc.get("fencedSessions").get(0);
        assertThat(fence.get("nodeIdFingerprint").asString()).isEqualTo(NodeIdFingerprint.of(fenced));
        assertThat(fence.get("supersededByFingerprint").asString()).isEqualTo(NodeIdFingerprint.of(successor));
        // The node_id is its node's write credential: no read endpoint may disclose it.
        assertThat(response.body()).doesNotContain(live.toString(), successor.toString(), fenced.toString());
        assertThat(doc.get("nodes").get(0).get("lastSeen").asString()).endsWith("Z");
    }
}
