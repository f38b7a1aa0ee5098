package io.pegaflow.server.admin;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.ssd.SsdStore;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.ReferenceHarness;
import io.pegaflow.testkit.browser.HeadlessChromium;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code /api/admin/ssd} and the SSD page with the tier on: two shards, blocks written to them, usage per shard in
 * the JSON and as a bar on the page. One server and (where Chromium is installed) one browser for the class.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=16MB",
            "pega.device.backend=host",
            "pega.ssd.enabled=true",
            "pega.ssd.capacity=16MB"
        })
class AdminSsdTest {
    private static final String HOST = "127.0.0.1";
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Path DIR = tempDir();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Autowired
    GrpcPort grpcPort;

    @Autowired
    PegaEngine engine;

    @Autowired
    SsdStore store;

    @Autowired
    Environment env;

    private MockScheduler scheduler;
    private MockVllmWorker worker;

    @DynamicPropertySource
    static void ssdPaths(DynamicPropertyRegistry r) {
        r.add("pega.ssd.paths[0]", () -> DIR.resolve("a").toString());
        r.add("pega.ssd.paths[1]", () -> DIR.resolve("b").toString());
    }

    private static Path tempDir() {
        try {
            return Files.createTempDirectory("pega-admin-ssd");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Eight blocks saved and written through to the shards, once for the class. */
    @BeforeAll
    void saveBlocks() throws Exception {
        scheduler = MockScheduler.connect(HOST, grpcPort.port());
        worker = ReferenceHarness.worker(HOST, grpcPort.port())
                .instanceId("ui-ssd")
                .build();
        worker.register();
        List<ByteString> hashes = BlockPattern.hashes(601, 4);
        worker.fillBlocks(blockIds(4), BlockPattern.perByte(61));
        worker.save(blockIds(4), hashes);
        scheduler.awaitSealed("ui-ssd", hashes, WAIT);
        store.flush().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    @AfterAll
    void cleanUp() throws IOException {
        if (worker != null) {
            worker.close();
        }
        if (scheduler != null) {
            scheduler.close();
        }
        engine.cleanupInstances(null);
        try (Stream<Path> files = Files.walk(DIR)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private JsonNode ssdDocument() throws Exception {
        HttpResponse<String> response = HTTP.send(
                HttpRequest.newBuilder(URI.create(base() + "/api/admin/ssd"))
                        .timeout(WAIT)
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return JsonMapper.builder().build().readTree(response.body());
    }

    private String base() {
        return "http://" + HOST + ":" + env.getProperty("local.server.port");
    }

    @Test
    void shouldReportShardsCountersAndQueues() throws Exception {
        JsonNode ssd = ssdDocument();

        assertThat(ssd.get("configured").asBoolean()).isTrue();
        assertThat(ssd.get("healthy").asBoolean()).isTrue();
        JsonNode shards = ssd.get("shards");
        assertThat(shards.size()).isEqualTo(2);
        long used = 0;
        for (int i = 0; i < 2; i++) {
            JsonNode shard = shards.get(i);
            assertThat(shard.get("id").asInt()).isEqualTo(i);
            assertThat(shard.get("path").asString())
                    .isEqualTo(store.shardStatus().get(i).path());
            assertThat(shard.get("capacity_bytes").asLong()).isEqualTo(8L << 20);
            assertThat(shard.get("healthy").asBoolean()).isTrue();
            assertThat(shard.get("failure_detail").asString()).isEmpty();
            used += shard.get("used_bytes").asLong();
        }
        assertThat(used).isPositive();
        assertThat(ssd.get("writes").get("blocks").asLong()).isEqualTo(4);
        assertThat(ssd.get("writes").get("bytes").asLong()).isPositive();
        assertThat(ssd.get("writes").get("queue_pending").asLong()).isZero();
        assertThat(ssd.get("reads").has("reserved")).isTrue();
        assertThat(ssd.get("errors").isObject()).isTrue();
        assertThat(ssd.get("rates").has("ssd_write_bytes_per_sec")).isTrue();
    }

    @Test
    void shouldDrawAUsageBarPerShard() {
        Optional<String> missing = HeadlessChromium.unavailable();
        Assumptions.assumeTrue(missing.isEmpty(), () -> missing.orElse(""));
        try (HeadlessChromium browser = HeadlessChromium.start(AdminUiBrowserTest.SHOTS)) {
            browser.open(base() + "/#ssd");

            WebElement shard = browser.awaitText(By.cssSelector("tr.shard[data-shard='1']"), "MiB");
            assertThat(shard.getText())
                    .contains(store.shardStatus().get(1).path())
                    .contains("/ 8.00 MiB");
            assertThat(browser.awaitElement(By.id("ssd-health")).getText()).contains("healthy");
            browser.screenshot("admin-ssd");
            assertThat(browser.foreignRequests()).isEmpty();
        }
    }
}
