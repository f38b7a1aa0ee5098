package io.pegaflow.metaserver.admin;

import static io.pegaflow.metaserver.grpc.Requests.h;
import static io.pegaflow.metaserver.grpc.Requests.heartbeat;
import static io.pegaflow.metaserver.grpc.Requests.insert;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pegaflow.metaserver.node.NodeIdFingerprint;
import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.Http;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import io.pegaflow.proto.MetaServerGrpc.MetaServerBlockingStub;
import io.pegaflow.testkit.browser.HeadlessChromium;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code /api/admin/info}, {@code /api/admin/cluster} and the cluster page at {@code /}, against a metaserver with a
 * live node and a stale one whose first session was fenced by a takeover.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ClusterAdminTest {

    @TempDir
    static Path dir;

    final AdjustableClock clock = new AdjustableClock();
    final UUID live = UUID.randomUUID();
    final UUID fenced = UUID.randomUUID();
    final UUID successor = UUID.randomUUID();
    MetaserverTestApp app;

    @BeforeAll
    void start() {
        app = MetaserverTestApp.start(dir, clock);
        MetaServerBlockingStub stub = app.stub();
        stub.heartbeatNode(heartbeat("10.7.0.2:50055", fenced));
        clock.advance(Duration.ofSeconds(40));
        stub.heartbeatNode(heartbeat("10.7.0.2:50055", successor));
        clock.advance(Duration.ofSeconds(40));
        stub.heartbeatNode(heartbeat("10.7.0.1:50055", live));
        stub.insertBlockHashes(insert("ns", "10.7.0.1:50055", live, h(1), h(2), h(3)));
    }

    @AfterAll
    void stop() {
        if (app != null) {
            app.close();
        }
    }

    private JsonNode json(String path) throws Exception {
        HttpResponse<String> response = Http.get(app.httpBase() + path);
        assertThat(response.statusCode()).as("GET %s", path).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/json");
        return JsonMapper.builder().build().readTree(response.body());
    }

    @Test
    void shouldSayItIsTheMetaserver() throws Exception {
        JsonNode info = json("/api/admin/info");

        assertThat(info.get("app").asString()).isEqualTo("pega-metaserver");
        assertThat(info.get("refresh_ms").asLong()).isPositive();
        assertThat(info.get("subsystems").get("cluster").asBoolean()).isTrue();
    }

    @Test
    void shouldListNodesWithLivenessHeartbeatFencingEpochAndBlocks() throws Exception {
        HttpResponse<String> raw = Http.get(app.httpBase() + "/api/admin/cluster");
        JsonNode c = json("/api/admin/cluster");

        assertThat(c.get("epoch").asLong())
                .isEqualTo(c.get("epoch_started_at_ms").asLong());
        assertThat(c.get("stale_after_secs").asLong()).isEqualTo(30);
        assertThat(c.get("block_keys").asLong()).isEqualTo(3);
        assertThat(c.get("block_owners").asLong()).isEqualTo(3);
        JsonNode first = c.get("nodes").get(0);
        assertThat(first.get("node").asString()).isEqualTo("10.7.0.1:50055");
        assertThat(first.get("state").asString()).isEqualTo("live");
        assertThat(first.get("node_id_fingerprint").asString()).isEqualTo(NodeIdFingerprint.of(live));
        assertThat(first.get("owned_blocks").asLong()).isEqualTo(3);
        assertThat(first.get("last_seen_age_ms").asLong()).isZero();
        assertThat(first.get("last_seen_ms").asLong()).isEqualTo(c.get("now_ms").asLong());
        JsonNode second = c.get("nodes").get(1);
        assertThat(second.get("state").asString()).isEqualTo("stale");
        assertThat(second.get("last_seen_age_ms").asLong()).isEqualTo(40_000);
        assertThat(second.get("takeovers").asLong()).isEqualTo(1);
        assertThat(second.get("fenced_node_id_fingerprints").get(0).asString()).isEqualTo(NodeIdFingerprint.of(fenced));
        JsonNode fence = c.get("fenced_sessions").get(0);
        assertThat(fence.get("node").asString()).isEqualTo("10.7.0.2:50055");
        assertThat(fence.get("superseded_by_fingerprint").asString()).isEqualTo(NodeIdFingerprint.of(successor));
        // A node_id is its node's write credential: no read may disclose one.
        assertThat(raw.body()).doesNotContain(live.toString(), successor.toString(), fenced.toString());
    }

    @Test
    void shouldServeTheClusterPageAtTheRoot() throws Exception {
        HttpResponse<String> root = Http.get(app.httpBase() + "/");

        assertThat(root.statusCode()).isEqualTo(200);
        assertThat(root.body()).contains("<title>PegaFlow admin</title>");
    }

    @Test
    void shouldShowNodesInTheBrowser() {
        Optional<String> missing = HeadlessChromium.unavailable();
        assumeTrue(missing.isEmpty(), () -> missing.orElse(""));
        try (HeadlessChromium browser = HeadlessChromium.start(Path.of("target", "screenshots"))) {
            browser.open(app.httpBase() + "/");

            WebElement node = browser.awaitText(By.cssSelector("tr[data-node='10.7.0.1:50055']"), "live");
            assertThat(node.getText()).contains(NodeIdFingerprint.of(live));
            assertThat(browser.awaitText(By.cssSelector("tr[data-node='10.7.0.2:50055']"), "stale")
                            .getText())
                    .contains("40 s ago")
                    .contains("1 fenced");
            assertThat(browser.awaitElement(By.id("node-count")).getText()).isEqualTo("1 live / 2");
            assertThat(browser.awaitElement(By.id("blocks-indexed")).getText()).isEqualTo("3");
            assertThat(browser.driver().findElements(By.id("nav-overview"))).isEmpty();
            browser.screenshot("admin-cluster");
            assertThat(browser.foreignRequests()).isEmpty();
        }
    }
}
