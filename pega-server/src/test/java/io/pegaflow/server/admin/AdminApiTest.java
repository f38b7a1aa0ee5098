package io.pegaflow.server.admin;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.ReferenceHarness;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

/** Every {@code /api/admin/*} document over real HTTP, against a server where a mock worker saved and queried. */
@Timeout(120)
class AdminApiTest extends AdminServerBase {
    private static final BlockPattern PATTERN = BlockPattern.perByte(41);

    private MockVllmWorker savedWorker(String id, List<ByteString> hashes) {
        MockVllmWorker w =
                ReferenceHarness.worker(HOST, grpcPort()).instanceId(id).build();
        w.register();
        w.fillBlocks(blockIds(4), PATTERN);
        w.save(blockIds(4), hashes);
        scheduler.awaitSealed(id, hashes, WAIT);
        return w;
    }

    @Test
    void shouldDescribeTheAppAndWhichSubsystemsRun() throws Exception {
        JsonNode info = json("/api/admin/info");

        assertThat(info.get("app").asString()).isEqualTo("pega-server");
        assertThat(info.get("backend").asString()).isEqualTo("host");
        assertThat(info.get("refresh_ms").asLong()).isPositive();
        assertThat(info.get("now_ms").asLong()).isPositive();
        JsonNode subsystems = info.get("subsystems");
        assertThat(subsystems.get("ssd").asBoolean()).isFalse();
        assertThat(subsystems.get("transfer").asBoolean()).isFalse();
        assertThat(subsystems.get("metaserver").asBoolean()).isFalse();
    }

    @Test
    void shouldReportPoolBlocksAndHitsByTierInTheOverview() throws Exception {
        List<ByteString> hashes = BlockPattern.hashes(401, 4);
        try (MockVllmWorker w = savedWorker("admin-overview", hashes)) {
            QueryReady ready = scheduler.queryUntilReady(w.instanceId(), hashes, "overview", WAIT);
            assertThat(ready.getNumHitBlocks()).isEqualTo(4);
            scheduler.release(ready.getLease());
            history.sample();

            JsonNode o = json("/api/admin/overview");

            JsonNode pool = o.get("pool");
            assertThat(pool.get("capacity_bytes").asLong())
                    .isEqualTo(engine.pool().capacityBytes());
            assertThat(pool.get("used_bytes").asLong()).isEqualTo(4 * 1024);
            assertThat(pool.get("largest_free_bytes").asLong()).isPositive();
            assertThat(pool.get("outstanding_allocations").asInt()).isEqualTo(1);
            assertThat(pool.get("alloc_failures").asLong()).isZero();
            JsonNode cache = o.get("cache");
            assertThat(cache.get("resident_blocks").asLong()).isEqualTo(4);
            assertThat(cache.get("resident_bytes").asLong()).isEqualTo(4 * 1024);
            assertThat(cache.get("insertions").asLong()).isGreaterThanOrEqualTo(4);
            assertThat(o.get("tiers").get("ram").asLong())
                    .isEqualTo(engine.metrics().tierRequests("ram"));
            assertThat(o.get("tiers").has("miss")).isTrue();
            assertThat(o.get("instances").asInt()).isEqualTo(1);
            assertThat(o.get("leases_active").asInt()).isZero();
            JsonNode history = o.get("history");
            assertThat(history.isArray()).isTrue();
            JsonNode last = history.get(history.size() - 1);
            assertThat(last.get("tiers").get("ram").asLong())
                    .isEqualTo(o.get("tiers").get("ram").asLong());
            assertThat(last.get("save_bytes").asLong()).isGreaterThanOrEqualTo(4 * 1024);
            assertThat(o.get("history_interval_ms").asLong()).isEqualTo(5000);
            JsonNode rates = o.get("rates");
            assertThat(rates.get("save_bytes_per_sec").asDouble()).isGreaterThanOrEqualTo(0);
            assertThat(rates.get("load_bytes_per_sec").asDouble()).isGreaterThanOrEqualTo(0);
            assertThat(rates.get("hit_ratio").isObject()).isTrue();
        }
    }

    @Test
    void shouldComputeRatesAndHitRatiosFromTheLastTwoSamples() {
        ThroughputHistory.Sample a = new ThroughputHistory.Sample(10_000, Map.of("ram", 10L, "miss", 0L), 0, 0, 0, 0);
        ThroughputHistory.Sample b =
                new ThroughputHistory.Sample(15_000, Map.of("ram", 13L, "miss", 1L), 5_000_000, 10_000_000, 0, 2_500);

        AdminDocuments.Rates r = AdminApiController.rates(List.of(a, b));

        assertThat(r.windowMs()).isEqualTo(5000);
        assertThat(r.saveBytesPerSec()).isEqualTo(1_000_000.0);
        assertThat(r.loadBytesPerSec()).isEqualTo(2_000_000.0);
        assertThat(r.ssdWriteBytesPerSec()).isEqualTo(500.0);
        assertThat(r.hitRatio()).containsEntry("ram", 0.75).containsEntry("miss", 0.25);
        assertThat(AdminApiController.rates(List.of(a)).hitRatio()).isEmpty();
    }

    @Test
    void shouldListInstancesWithDevicesLayersAndLayout() throws Exception {
        try (MockVllmWorker w = ReferenceHarness.worker(HOST, grpcPort())
                .instanceId("admin-inst")
                .build()) {
            w.register();

            JsonNode instances = json("/api/admin/instances").get("instances");

            assertThat(instances.size()).isEqualTo(1);
            JsonNode i = instances.get(0);
            assertThat(i.get("id").asString()).isEqualTo("admin-inst");
            assertThat(i.get("namespace").asString()).isEqualTo(ReferenceHarness.NAMESPACE);
            assertThat(i.get("tp_size").asInt()).isEqualTo(w.tpSize());
            assertThat(i.get("world_size").asInt()).isEqualTo(w.worldSize());
            assertThat(i.get("num_layers").asInt()).isEqualTo(1);
            assertThat(i.get("leases").asInt()).isZero();
            assertThat(i.get("detached").asBoolean()).isFalse();
            JsonNode d = i.get("devices").get(0);
            assertThat(d.get("device_id").asInt()).isEqualTo(w.deviceId());
            assertThat(d.get("layers").asInt()).isEqualTo(1);
            assertThat(d.get("layout").asString()).isEqualTo("contiguous");
            assertThat(d.get("num_blocks").asLong()).isEqualTo(ReferenceHarness.NUM_BLOCKS);
            assertThat(d.get("bytes_per_block").asLong()).isEqualTo(ReferenceHarness.BLOCK_BYTES);
        }
    }

    @Test
    void shouldListTheLiveLeaseUntilItIsReleased() throws Exception {
        List<ByteString> hashes = BlockPattern.hashes(402, 4);
        try (MockVllmWorker w = savedWorker("admin-lease", hashes)) {
            QueryReady ready = scheduler.queryUntilReady(w.instanceId(), hashes, "leased", WAIT);

            JsonNode leases = json("/api/admin/leases");

            assertThat(leases.get("active").asInt()).isEqualTo(1);
            assertThat(leases.get("blocks_held").asLong()).isEqualTo(4);
            long ttl = leases.get("ttl_ms").asLong();
            JsonNode lease = leases.get("leases").get(0);
            String prefix = HexFormat.of().formatHex(ready.getLease().toByteArray(), 0, 4);
            assertThat(lease.get("id_prefix").asString()).isEqualTo(prefix);
            assertThat(lease.get("instance_id").asString()).isEqualTo("admin-lease");
            assertThat(lease.get("blocks").asInt()).isEqualTo(4);
            assertThat(lease.get("consumers_left").asInt()).isEqualTo(1);
            assertThat(lease.get("expires_in_ms").asLong()).isPositive().isLessThanOrEqualTo(ttl);
            assertThat(json("/api/admin/instances")
                            .get("instances")
                            .get(0)
                            .get("leases")
                            .asInt())
                    .isEqualTo(1);

            scheduler.release(ready.getLease());

            JsonNode after = json("/api/admin/leases");
            assertThat(after.get("active").asInt()).isZero();
            assertThat(after.get("leases").size()).isZero();
        }
    }

    @Test
    void shouldSayTheSsdTierIsNotConfigured() throws Exception {
        JsonNode ssd = json("/api/admin/ssd");

        assertThat(ssd.get("configured").asBoolean()).isFalse();
        assertThat(ssd.get("message").asString()).isEqualTo("SSD tier not configured");
    }

    @Test
    void shouldSayTheTransferEngineIsNotConfigured() throws Exception {
        JsonNode transfer = json("/api/admin/transfer");

        assertThat(transfer.get("configured").asBoolean()).isFalse();
        assertThat(transfer.get("message").asString()).isEqualTo("transfer engine not configured");
    }

    @Test
    void shouldSayTheMetaserverIsNotConfigured() throws Exception {
        JsonNode metaserver = json("/api/admin/metaserver");

        assertThat(metaserver.get("configured").asBoolean()).isFalse();
        assertThat(metaserver.get("message").asString()).isEqualTo("metaserver not configured");
    }

    @Test
    void shouldTellWhetherThisCallersMutationsWouldPass() throws Exception {
        JsonNode anonymous = json("/api/admin/access");
        HttpResponse<String> withToken = HTTP.send(
                HttpRequest.newBuilder(URI.create(base() + "/api/admin/access"))
                        .header("Authorization", "Bearer " + TOKEN)
                        .timeout(WAIT)
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(anonymous.get("permitted").asBoolean()).isFalse();
        assertThat(anonymous.get("token_configured").asBoolean()).isTrue();
        assertThat(anonymous.get("loopback_listener").asBoolean()).isFalse();
        assertThat(anonymous.get("how_to_enable").asString()).contains("pega.admin.token");
        assertThat(JSON.readTree(withToken.body()).get("permitted").asBoolean()).isTrue();
    }

    @Test
    void shouldServeTheDashboardAtTheRoot() throws Exception {
        HttpResponse<String> root = get("/");
        HttpResponse<String> app = get("/admin/app.js");

        assertThat(root.statusCode()).isEqualTo(200);
        assertThat(root.headers().firstValue("content-type"))
                .hasValueSatisfying(t -> assertThat(t).startsWith("text/html"));
        assertThat(root.body()).contains("<title>PegaFlow admin</title>").contains("admin/app.js");
        assertThat(app.statusCode()).isEqualTo(200);
        assertThat(app.headers().firstValue("content-type"))
                .hasValueSatisfying(t -> assertThat(t).contains("javascript"));
    }
}
