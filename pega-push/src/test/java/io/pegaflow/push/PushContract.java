package io.pegaflow.push;

import static io.pegaflow.push.PushFixture.LAYERS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pegaflow.proto.ext.push.PrepareReceiveResponse;
import io.pegaflow.push.view.PushView;
import io.pegaflow.testkit.LayerReadyShm;
import io.pegaflow.testkit.LoadStateShm;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.PushClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two push servers on loopback, real gRPC and real UCX between them, a mock prefill worker that writes layer after
 * layer into its shm "GPU memory" and a mock decode worker: the behaviour every transport must show.
 */
@Timeout(120)
abstract class PushContract {
    static final Duration RPC = Duration.ofSeconds(10);
    PushNode prefillNode;
    PushNode decodeNode;
    MockVllmWorker prefill;
    MockVllmWorker decode;
    PushClient prefillClient;
    PushClient decodeClient;

    abstract String transports();

    PushConfig config() {
        return PushConfig.defaults().withTimeouts(Duration.ofSeconds(20), Duration.ofSeconds(20));
    }

    /** One of the two servers. */
    PushNode startNode() {
        return PushNode.start(transports(), config());
    }

    @BeforeEach
    void startServers() {
        prefillNode = startNode();
        decodeNode = startNode();
        prefill = PushFixture.worker("prefill-0", 0, 1, prefillNode.port());
        decode = PushFixture.worker("decode-0", 0, 1, decodeNode.port());
        prefillClient = PushClient.connect("127.0.0.1", prefillNode.port(), RPC);
        decodeClient = PushClient.connect("127.0.0.1", decodeNode.port(), RPC);
        assertThat(prefillClient.registerLayers(prefill)).isEqualTo(LAYERS);
        assertThat(decodeClient.registerLayers(decode)).isEqualTo(LAYERS);
    }

    @AfterEach
    void stopServers() {
        // the push engines give the engines' device lanes back when they close, before their cache engines do
        if (prefillNode != null && decodeNode != null) {
            closeAll(prefillNode.engine, decodeNode.engine);
            assertThat(prefillNode.cache.workers().activeDevices()).isZero();
            assertThat(decodeNode.cache.workers().activeDevices()).isZero();
        }
        closeAll(prefillClient, decodeClient, prefill, decode, prefillNode, decodeNode);
        // every staging allocation was given back: nothing outstanding in either pool after its engine closed
        assertThat(prefillNode.pool.outstandingAllocations()).isZero();
        assertThat(decodeNode.pool.outstandingAllocations()).isZero();
        afterServersStopped();
    }

    /** What a transport checks once both servers are closed. */
    void afterServersStopped() {}

    static void closeAll(AutoCloseable... all) {
        for (AutoCloseable c : all) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }

    @Test
    void shouldDeliverEveryLayerByteForByteAndSignalCompletionOnBothSides() throws Exception {
        List<Long> from = PushFixture.blocks(3, 4, 5, 9, 20, 21, 40);
        List<Long> to = PushFixture.blocks(10, 11, 2, 30, 31, 32, 63);
        try (LoadStateShm loadState = LoadStateShm.create();
                LoadStateShm pushState = LoadStateShm.create();
                LayerReadyShm ready = LayerReadyShm.create(LAYERS)) {
            PrepareReceiveResponse prepared =
                    decodeClient.prepareReceive("decode-0", "req-1-d", to, List.of(loadState.name()), RPC);
            prefillClient.startPush("prefill-0", 0, "req-1-p", prepared.getHandshake(), from, ready, pushState, RPC);
            long[] readyAt = new long[LAYERS]; // the engines run on NanoClock.SYSTEM, this clock
            for (int l = 0; l < LAYERS; l++) {
                PushFixture.writeLayer(prefill, l, from, 7);
                Thread.sleep(20); // the rest of the layer's forward pass
                readyAt[l] = System.nanoTime();
                ready.markReady(l + 1);
                int layer = l;
                // layer by layer: this layer arrives, and the next one (not yet marked ready) has not moved
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> PushFixture.layerMismatch(prefill, decode, layer, from, to)
                                .isEmpty());
                if (l + 1 < LAYERS) {
                    assertThat(PushFixture.layerZero(decode, l + 1, to)).isTrue();
                }
            }
            assertThat(loadState.awaitTerminal(Duration.ofSeconds(10))).isEqualTo(LoadStateShm.SUCCESS);
            assertThat(pushState.awaitTerminal(Duration.ofSeconds(10))).isEqualTo(LoadStateShm.SUCCESS);
            for (int l = 0; l < LAYERS; l++) {
                PushFixture.assertLayerEqual(prefill, decode, l, from, to);
            }
            long bytes =
                    (long) from.size() * LAYERS * PushFixture.LAYOUT.rangesPerBlock() * PushFixture.LAYOUT.rangeBytes();
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> prefillNode.engine.view().pushesInFlight() == 0
                            && decodeNode.engine.view().receivesInFlight() == 0);
            PushView p = prefillNode.engine.view();
            PushView d = decodeNode.engine.view();
            assertThat(p.bytesPushed()).isEqualTo(bytes);
            assertThat(d.bytesReceived()).isEqualTo(bytes);
            assertThat(p.pushesCompleted()).isEqualTo(1);
            assertThat(d.receivesCompleted()).isEqualTo(1);
            assertThat(p.pushFailures() + d.receiveFailures()).isZero();
            assertThat(p.maxLayerLagNanos()).isPositive();
            // every copy ran on the cache engine's lanes of the device: one device to pool per layer on the prefill
            // side, one pool to device per layer on the decode side, and the lanes count as the device's context
            assertThat(prefillNode.cache.workers().copiesRun()).isEqualTo(LAYERS);
            assertThat(decodeNode.cache.workers().copiesRun()).isEqualTo(LAYERS);
            assertThat(prefillNode.cache.workers().activeDevices()).isEqualTo(1);
            assertThat(prefillNode.cache.deviceCount()).isEqualTo(1);
            // the timeline the GPU script computes the overlap from: each layer on the device after it was marked
            // ready and before the next one was (this test waits for each layer), all before the receive ended
            PushView.ReceiveTimeline t = d.recentReceives().stream()
                    .filter(x -> x.requestId().equals("req-1-d"))
                    .findFirst()
                    .orElseThrow();
            assertThat(t.succeeded()).isTrue();
            assertThat(t.id())
                    .as("views name receives by a sequence number, never by the id")
                    .startsWith("r")
                    .doesNotContain(Long.toUnsignedString(prepared.getReceiveId()));
            assertThat(t.layerOnDeviceNanos()).hasSize(LAYERS);
            for (int l = 0; l < LAYERS; l++) {
                assertThat(t.layerOnDeviceNanos().get(l)).isGreaterThan(readyAt[l]);
                assertThat(t.layerOnDeviceNanos().get(l)).isLessThanOrEqualTo(t.endedNanos());
                if (l + 1 < LAYERS) {
                    assertThat(t.layerOnDeviceNanos().get(l)).isLessThan(readyAt[l + 1]);
                }
            }
            assertThat(t.preparedNanos()).isLessThan(readyAt[0]);
            assertThat(d.clockNanos()).isGreaterThanOrEqualTo(t.endedNanos());
        }
    }

    @Test
    void shouldPushLayersMarkedReadyBeforeStartPushAtOnce() {
        List<Long> from = PushFixture.blocks(0, 1, 2, 3);
        List<Long> to = PushFixture.blocks(60, 61, 62, 63);
        try (LoadStateShm loadState = LoadStateShm.create();
                LoadStateShm pushState = LoadStateShm.create();
                LayerReadyShm ready = LayerReadyShm.create(LAYERS)) {
            for (int l = 0; l < LAYERS; l++) {
                PushFixture.writeLayer(prefill, l, from, 11);
            }
            ready.markReady(LAYERS);
            PrepareReceiveResponse prepared =
                    decodeClient.prepareReceive("decode-0", "req-2-d", to, List.of(loadState.name()), RPC);
            prefillClient.startPush("prefill-0", 0, "req-2-p", prepared.getHandshake(), from, ready, pushState, RPC);
            assertThat(loadState.awaitTerminal(Duration.ofSeconds(20))).isEqualTo(LoadStateShm.SUCCESS);
            assertThat(pushState.awaitTerminal(Duration.ofSeconds(20))).isEqualTo(LoadStateShm.SUCCESS);
            for (int l = 0; l < LAYERS; l++) {
                PushFixture.assertLayerEqual(prefill, decode, l, from, to);
            }
        }
    }
}
