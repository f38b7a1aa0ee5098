package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.KIB;
import static io.pegaflow.core.engine.EngineHarness.MIB;

import io.pegaflow.core.device.Caller;
import io.pegaflow.core.device.LayerMemory;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.plan.RangePlan;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * What a copy costs on the engine's device lanes beyond the copy itself (docs/pd-push.md, "Copies on the engine's
 * lanes"): 36 small copies (a layer's worth of a short request) run inline on the caller's thread, queued and awaited
 * one at a time (a push agent that waits for each layer), and all queued before the first is awaited. On demand only:
 * {@code ./mvnw -o -pl pega-core -am test -Dtest=LaneHandoffBenchRun -Dsurefire.failIfNoSpecifiedTests=false
 * -Dlane.bench=true}.
 */
class LaneHandoffBenchRun {
    private static final int LAYERS = 36;
    private static final long BYTES = 64 * KIB;
    private static final int ROUNDS = 300;

    @Test
    @EnabledIfSystemProperty(named = "lane.bench", matches = "true")
    void run() throws Exception {
        try (EngineHarness harness = new EngineHarness(
                        EngineConfig.defaults(PoolConfig.of(16 * MIB)),
                        List.of(),
                        new AgentGroup(),
                        EngineLimits.DEFAULTS);
                TestShm device = TestShm.create("pega_lanebench_", LAYERS * BYTES);
                LayerMemory layer = harness.engine
                        .workers()
                        .openLayer(Caller.inProcess("p"), 0, device.descriptor(0, LAYERS * BYTES));
                DeviceWorkers.Lanes lanes = harness.engine.workers().lanes(0)) {
            PinnedAllocation staging = harness.engine.staging().allocate("lane bench", LAYERS * BYTES);
            try {
                List<RangePlan> plans = new ArrayList<>();
                for (int l = 0; l < LAYERS; l++) {
                    RangePlan plan = new RangePlan(1);
                    plan.add(layer.baseAddress() + l * BYTES, staging.address() + l * BYTES, BYTES);
                    plans.add(plan);
                }
                long[] oneByOne = new long[ROUNDS];
                long[] queued = new long[ROUNDS];
                for (int r = 0; r < ROUNDS; r++) {
                    long t0 = System.nanoTime();
                    for (RangePlan plan : plans) {
                        lanes.copyToHost(plan, () -> {}).get(10, TimeUnit.SECONDS);
                    }
                    long t1 = System.nanoTime();
                    List<CompletableFuture<Void>> all = new ArrayList<>(LAYERS);
                    for (RangePlan plan : plans) {
                        all.add(lanes.copyToHost(plan, () -> {}));
                    }
                    for (CompletableFuture<Void> f : all) {
                        f.get(10, TimeUnit.SECONDS);
                    }
                    long t2 = System.nanoTime();
                    oneByOne[r] = t1 - t0;
                    queued[r] = t2 - t1;
                }
                java.util.Arrays.sort(oneByOne);
                java.util.Arrays.sort(queued);
                System.out.printf(
                        Locale.ROOT,
                        "LANEBENCH %d copies of %d KiB: awaited one by one p50=%.3fms p90=%.3fms;"
                                + " all queued then awaited p50=%.3fms p90=%.3fms%n",
                        LAYERS,
                        BYTES / KIB,
                        oneByOne[ROUNDS / 2] / 1e6,
                        oneByOne[ROUNDS * 9 / 10] / 1e6,
                        queued[ROUNDS / 2] / 1e6,
                        queued[ROUNDS * 9 / 10] / 1e6);
            } finally {
                staging.release();
            }
        }
    }
}
