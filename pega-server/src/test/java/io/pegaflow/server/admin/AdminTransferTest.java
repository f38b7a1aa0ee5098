package io.pegaflow.server.admin;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.proto.RdmaHandshakeRequest;
import io.pegaflow.proto.RdmaHandshakeResponse;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.browser.HeadlessChromium;
import io.pegaflow.transfer.HandshakeDescriptor;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.ucx.UcxTransferEngine;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.openqa.selenium.By;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;
import org.springframework.test.annotation.DirtiesContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code /api/admin/transfer} and the Transfer page with P2P on, over shared memory, and the push engine beside it: a
 * peer that handshook through {@code RdmaHandshake} shows with its two connections open, and the pool as memory the
 * transfer engine's UCX context allocated, with both engines on that context (decision 0019). One server and (where
 * Chromium is installed) one browser for the class.
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
            "pega.rdma.enabled=true",
            "pega.rdma.nics=lo",
            "pega.rdma.transports=shm,self",
            "pega.pd.enabled=true",
            "pega.pd.transports=shm,self"
        })
@DirtiesContext
class AdminTransferTest {
    private static final String HOST = "127.0.0.1";
    private static final String PEER = "127.0.0.1:40002";
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Autowired
    GrpcPort grpcPort;

    @Autowired
    Environment env;

    @Autowired
    TransferEngine server;

    private PinnedMemoryPool peerPool;
    private TransferEngine peer;

    /** A peer engine that handshakes with the server as a requester does, once for the class. */
    @BeforeAll
    void connectAPeer() throws Exception {
        peerPool = PinnedMemoryPool.create(PoolConfig.of(4L << 20));
        peer = UcxTransferEngine.open(
                TransferConfig.of("lo", 2).withTransports("shm,self"), peerPool.regions(), NanoClock.SYSTEM);
        try (MockScheduler s = MockScheduler.connect(HOST, grpcPort.port())) {
            RdmaHandshakeResponse hs = s.stub()
                    .withDeadlineAfter(30, TimeUnit.SECONDS)
                    .rdmaHandshake(RdmaHandshakeRequest.newBuilder()
                            .setRequesterId(PEER)
                            .setHandshakeMetadata(
                                    ByteString.copyFrom(peer.localDescriptor().encode()))
                            .build());
            peer.connect(
                            new PeerId(HOST + ":" + grpcPort.port()),
                            HandshakeDescriptor.decode(hs.getHandshakeMetadata().toByteArray()),
                            10_000_000_000L)
                    .get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
    }

    /** The server drops its side first, so neither side closes an endpoint whose peer is already gone. */
    @AfterAll
    void closePeer() throws Exception {
        server.disconnect(new PeerId(PEER)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        if (peer != null) {
            peer.close();
        }
        if (peerPool != null) {
            peerPool.close();
        }
    }

    private String base() {
        return "http://" + HOST + ":" + env.getProperty("local.server.port");
    }

    @Test
    void shouldReportThePeersConnectionsAndThePoolsMemory() throws Exception {
        HttpResponse<String> response = HTTP.send(
                HttpRequest.newBuilder(URI.create(base() + "/api/admin/transfer"))
                        .timeout(WAIT)
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode t = JsonMapper.builder().build().readTree(response.body());

        assertThat(t.get("configured").asBoolean()).isTrue();
        assertThat(t.get("transports").asString()).isEqualTo("shm,self");
        JsonNode memory = t.get("pool_memory");
        assertThat(memory.get("allocated_by").asString()).isEqualTo("ucx");
        assertThat(memory.get("shards").asInt()).isPositive();
        assertThat(memory.get("shared_shards").asInt())
                .isEqualTo(memory.get("shards").asInt());
        assertThat(memory.get("engines_on_context").asInt())
                .as("the transfer engine and the push engine")
                .isEqualTo(2);
        JsonNode peers = t.get("peers");
        assertThat(peers.size()).isEqualTo(1);
        assertThat(peers.get(0).get("peer").asString()).isEqualTo(PEER);
        assertThat(peers.get(0).get("connections").size()).isEqualTo(2);
        for (JsonNode c : peers.get(0).get("connections")) {
            assertThat(c.get("state").asString()).isEqualTo("OPEN");
        }
    }

    @Test
    void shouldShowThePeerAndThePoolMemoryOnTheTransferPage() {
        Optional<String> missing = HeadlessChromium.unavailable();
        Assumptions.assumeTrue(missing.isEmpty(), () -> missing.orElse(""));
        try (HeadlessChromium browser = HeadlessChromium.start(AdminUiBrowserTest.SHOTS)) {
            browser.open(base() + "/#transfer");

            String card = browser.awaitText(By.cssSelector("[data-peer='" + PEER + "']"), "OPEN")
                    .getText();
            assertThat(card).contains("#0").contains("#1");
            assertThat(browser.awaitElement(By.id("pool-memory")).getText())
                    .contains("UCX-allocated")
                    .contains("shards in shared memory")
                    .contains("2 engines on its context");
            browser.screenshot("admin-transfer");
            assertThat(browser.foreignRequests()).isEmpty();
        }
    }
}
