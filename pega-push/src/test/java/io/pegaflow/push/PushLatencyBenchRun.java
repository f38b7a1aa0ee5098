package io.pegaflow.push;

import io.pegaflow.proto.ext.push.PrepareReceiveResponse;
import io.pegaflow.push.view.PushView;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.LayerReadyShm;
import io.pegaflow.testkit.LoadStateShm;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.PushClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The host-backend version of the GPU measurement (docs/pd-push.md): two push servers on loopback, a mock prefill
 * worker with a Qwen3-8B-shaped cache (36 layers, 8 KV heads, head 128, bf16, block 16) that "computes" each layer for
 * the reference's baseline TTFT / 36 and then marks it ready, and a decode worker. Prints the added latency (last layer
 * ready to the decode worker's load_state = 1) and the overlap (share of the KV bytes already on the decode "device"
 * when the last layer became ready), and the layer lag (a layer marked ready to that layer on the decode "device",
 * median and max over the layers, averaged over the runs). {@code push.bench.layer-us} replaces the simulated forward
 * time per layer: 0 marks every layer ready at once, so the lag shows what the push path costs per layer when layers
 * queue up (as on a GPU, where a layer's forward is shorter than its trip). On demand only:
 * {@code ./mvnw -o -pl pega-push -am test -Dtest=PushLatencyBenchRun -Dsurefire.failIfNoSpecifiedTests=false
 * -Dpush.bench=true [-Dpush.bench.tokens=512,1024,2048] [-Dpush.bench.transports=tcp,shm,self]
 * [-Dpush.bench.layer-us=0]}.
 */
class PushLatencyBenchRun {
    private static final int LAYERS = 36;
    private static final int BLOCK = 16;
    private static final int REPEATS = 3;

    @Test
    @EnabledIfSystemProperty(named = "push.bench", matches = "true")
    void run() throws Exception {
        String tokensList = System.getProperty("push.bench.tokens", "512,1024,2048");
        for (String transports : java.util.regex.Pattern.compile(";")
                .split(System.getProperty("push.bench.transports", "tcp;shm,self"), -1)) {
            for (String t : java.util.regex.Pattern.compile(",").split(tokensList, -1)) {
                measure(transports, Integer.parseInt(t.strip()));
            }
        }
    }

    /** The reference's single-GPU baseline TTFT (novitalabs/pegaflow v0.22.4), spread over 36 layers. */
    private static long layerNanos(int tokens) {
        String override = System.getProperty("push.bench.layer-us");
        if (override != null) {
            return Long.parseLong(override.strip()) * 1000;
        }
        double ms = tokens <= 512
                ? 66.1
                : tokens <= 1024
                        ? 120.3
                        : tokens <= 2048 ? 236.3 : tokens <= 4096 ? 481.2 : tokens <= 8192 ? 1019.6 : 2251.2;
        return (long) (ms * 1e6 / LAYERS);
    }

    private static void measure(String transports, int tokens) throws Exception {
        int blocks = (tokens + BLOCK - 1) / BLOCK;
        KvLayout layout = KvLayout.kvFirst(blocks, BLOCK, 8, 128, 2);
        long kvBytes = (long) blocks * LAYERS * 2 * layout.rangeBytes();
        long pool = 2 * kvBytes + (64L << 20); // one request may take half (pega.limits.request-pool-share)
        PushConfig config = PushConfig.defaults().withTimeouts(Duration.ofSeconds(60), Duration.ofSeconds(60));
        List<String> names =
                IntStream.range(0, LAYERS).mapToObj(i -> "layer." + i).toList();
        List<Long> ids = new ArrayList<>();
        for (long b = 0; b < blocks; b++) {
            ids.add(b);
        }
        try (PushNode p = PushNode.start(transports, config, pool);
                PushNode d = PushNode.start(transports, config, pool);
                MockVllmWorker pw = MockVllmWorker.builder("127.0.0.1", p.port())
                        .instanceId("p")
                        .sharedLayers(names, layout)
                        .build();
                MockVllmWorker dw = MockVllmWorker.builder("127.0.0.1", d.port())
                        .instanceId("d")
                        .sharedLayers(names, layout)
                        .build();
                PushClient pc = PushClient.connect("127.0.0.1", p.port(), Duration.ofSeconds(30));
                PushClient dc = PushClient.connect("127.0.0.1", d.port(), Duration.ofSeconds(30))) {
            pc.registerLayers(pw);
            dc.registerLayers(dw);
            double added = 0;
            double overlap = 0;
            double lagMedian = 0;
            double lagMax = 0;
            for (int rep = 0; rep <= REPEATS; rep++) {
                try (LoadStateShm load = LoadStateShm.create();
                        LoadStateShm push = LoadStateShm.create();
                        LayerReadyShm ready = LayerReadyShm.create(LAYERS)) {
                    long before = d.engine.stats().bytesReceived();
                    PrepareReceiveResponse r =
                            dc.prepareReceive("d", "b", ids, List.of(load.name()), Duration.ofSeconds(60));
                    pc.startPush("p", 0, "b", r.getHandshake(), ids, ready, push, Duration.ofSeconds(60));
                    long lastReady = 0;
                    long[] readyAt = new long[LAYERS];
                    for (int l = 0; l < LAYERS; l++) {
                        long end = System.nanoTime() + layerNanos(tokens);
                        while (System.nanoTime() < end) {
                            LockSupport.parkNanos(50_000);
                        }
                        readyAt[l] = System.nanoTime();
                        ready.markReady(l + 1);
                        lastReady = System.nanoTime();
                    }
                    long atLast = d.engine.stats().bytesReceived() - before;
                    while (load.state() == LoadStateShm.PENDING) {
                        LockSupport.parkNanos(10_000);
                    }
                    long done = System.nanoTime();
                    if (load.state() != LoadStateShm.SUCCESS) {
                        throw new AssertionError("push failed");
                    }
                    push.awaitTerminal(Duration.ofSeconds(30));
                    double[] lag = layerLagMillis(d, rep + 1, readyAt);
                    if (rep > 0) { // the first run warms up
                        added += (done - lastReady) / 1e6 / REPEATS;
                        overlap += (double) atLast / kvBytes / REPEATS;
                        lagMedian += lag[LAYERS / 2] / REPEATS;
                        lagMax += lag[LAYERS - 1] / REPEATS;
                    }
                }
            }
            System.out.printf(
                    Locale.ROOT,
                    "PUSHBENCH transports=%s tokens=%d kv=%.1fMiB forward=%.1fms added=%.2fms overlap=%.0f%%"
                            + " layer-lag median=%.2fms max=%.2fms%n",
                    transports,
                    tokens,
                    kvBytes / 1048576.0,
                    layerNanos(tokens) * LAYERS / 1e6,
                    added,
                    overlap * 100,
                    lagMedian,
                    lagMax);
        }
    }

    /**
     * Each layer's time from ready (this process's clock, which the in-process decode node shares) to on the decode
     * device, sorted, from the timeline of the receive that ended last.
     */
    private static double[] layerLagMillis(PushNode decode, int ended, long[] readyAt) throws InterruptedException {
        List<PushView.ReceiveTimeline> recent = decode.engine.view().recentReceives();
        for (int i = 0; i < 1000 && recent.size() < ended; i++) { // the timeline is kept just after the verdict
            Thread.sleep(1);
            recent = decode.engine.view().recentReceives();
        }
        List<Long> onDevice = recent.get(recent.size() - 1).layerOnDeviceNanos();
        double[] lag = new double[readyAt.length];
        for (int l = 0; l < readyAt.length; l++) {
            lag[l] = (onDevice.get(l) - readyAt[l]) / 1e6;
        }
        Arrays.sort(lag);
        return lag;
    }
}
