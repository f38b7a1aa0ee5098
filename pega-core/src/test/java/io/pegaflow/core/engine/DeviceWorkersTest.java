package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.KIB;
import static io.pegaflow.core.engine.EngineHarness.MIB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.device.Caller;
import io.pegaflow.core.device.LayerMemory;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.plan.RangePlan;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Copies of layers mapped beside the cache (the P/D push) run on the engine's own device lanes: one lane pair per
 * device, started by the first lease and stopped by the last, counted against the engine's device and lane-thread
 * limits, byte-exact beside the Saves of an instance on the same device, and nothing outstanding once closed.
 */
@Timeout(60)
class DeviceWorkersTest {
    private static final int BLOCK = (int) (4 * KIB);
    /** Two device contexts at most (four lane threads). */
    private static final EngineLimits LIMITS = new EngineLimits(0.5, 256, 64, 2, 4, 16384, 1024);

    private EngineHarness harness;
    private PegaEngine engine;
    private DeviceWorkers workers;
    private TestShm device;

    @BeforeEach
    void start() {
        harness = new EngineHarness(EngineConfig.defaults(PoolConfig.of(4 * MIB)), List.of(), new AgentGroup(), LIMITS);
        engine = harness.engine;
        workers = engine.workers();
        device = TestShm.create("pega_workers_", 8L * BLOCK);
    }

    @AfterEach
    void tearDown() {
        harness.close();
        device.close();
    }

    @Test
    void shouldRoundTripThroughTheEnginesLanesAndStopThemWithTheLastLease() throws Exception {
        byte[] bytes = EngineHarness.content(7, 2 * BLOCK);
        device.write(0, bytes);
        try (LayerMemory layer = workers.openLayer(Caller.inProcess("p"), 0, device.descriptor(0, 8L * BLOCK))) {
            PinnedAllocation staging = engine.staging().allocate("push staging of instance p rank 0", 2L * BLOCK);
            DeviceWorkers.Lanes lanes = workers.lanes(0);
            DeviceWorkers.Lanes second = workers.lanes(0);
            assertThat(workers.activeDevices()).isEqualTo(1);
            assertThat(engine.deviceCount())
                    .as("the lanes are one device context")
                    .isEqualTo(1);
            assertThat(laneThreads()).contains("pega-push-dev0-save", "pega-push-dev0-load");

            AtomicInteger given = new AtomicInteger();
            RangePlan out = new RangePlan(1);
            out.add(layer.baseAddress(), staging.address(), 2L * BLOCK);
            lanes.copyToHost(out, given::incrementAndGet).get(10, TimeUnit.SECONDS);
            RangePlan back = new RangePlan(1);
            back.add(staging.address(), layer.baseAddress() + 4L * BLOCK, 2L * BLOCK);
            second.copyToDevice(back, given::incrementAndGet).get(10, TimeUnit.SECONDS);

            assertThat(device.read(4L * BLOCK, 2 * BLOCK)).isEqualTo(bytes);
            assertThat(given).as("each copy gave back what it held, once").hasValue(2);
            assertThat(workers.copiesRun()).isEqualTo(2);

            lanes.close();
            lanes.close(); // idempotent: the other lease still holds the lanes
            assertThat(workers.activeDevices()).isEqualTo(1);
            second.close();
            assertThat(workers.activeDevices()).isZero();
            assertThat(engine.deviceCount()).isZero();
            assertThat(laneThreads()).doesNotContain("pega-push-dev0-save", "pega-push-dev0-load");
            staging.release();
        }
        assertThat(harness.engine.pool().outstandingAllocations()).isZero();
    }

    @Test
    void shouldCountTheLanesAgainstTheEnginesDeviceLimit() {
        harness.worker("w", "ns", 1, 0, 4, BLOCK).register();
        DeviceWorkers.Lanes lanes = workers.lanes(1);

        assertThatThrownBy(() -> workers.lanes(2)).isInstanceOfSatisfying(EngineException.class, e -> {
            assertThat(e.kind()).isEqualTo(EngineException.Kind.RESOURCE_EXHAUSTED);
            assertThat(e.getMessage()).contains("pega.limits.devices");
        });
        assertThat(workers.activeDevices()).isEqualTo(1);
        try (DeviceWorkers.Lanes shared = workers.lanes(1)) {
            assertThat(shared.deviceId())
                    .as("a device's lanes are shared, not started twice")
                    .isEqualTo(1);
        }
        lanes.close();
        workers.lanes(2).close();
    }

    @Test
    void shouldCopyByteExactWhileAnInstanceSavesOnTheSameDevice() throws Exception {
        EngineHarness.Worker worker = harness.worker("saver", "ns", 1, 0, 64, BLOCK);
        worker.register();
        byte[] bytes = EngineHarness.content(11, BLOCK);
        device.write(0, bytes);
        try (LayerMemory layer = workers.openLayer(Caller.inProcess("p"), 0, device.descriptor(0, 8L * BLOCK));
                DeviceWorkers.Lanes lanes = workers.lanes(0)) {
            PinnedAllocation staging = engine.staging().allocate("push staging", BLOCK);
            CompletableFuture<Void> saves = CompletableFuture.runAsync(() -> {
                for (int round = 0; round < 16; round++) {
                    int[] ids = EngineHarness.ids(round * 4, round * 4 + 4);
                    long[] contents = new long[4];
                    for (int i = 0; i < 4; i++) {
                        contents[i] = 1000L + round * 4L + i;
                    }
                    worker.fill(ids, contents);
                    worker.save(ids, EngineHarness.hashes(round, 4));
                }
            });
            for (int i = 0; i < 32; i++) {
                RangePlan out = new RangePlan(1);
                out.add(layer.baseAddress(), staging.address(), BLOCK);
                lanes.copyToHost(out, () -> {}).get(10, TimeUnit.SECONDS);
                RangePlan back = new RangePlan(1);
                back.add(staging.address(), layer.baseAddress() + (1 + i % 7) * (long) BLOCK, BLOCK);
                lanes.copyToDevice(back, () -> {}).get(10, TimeUnit.SECONDS);
            }
            saves.get(30, TimeUnit.SECONDS);
            staging.release();
            for (int slot = 1; slot < 8; slot++) {
                assertThat(device.read((long) slot * BLOCK, BLOCK)).isEqualTo(bytes);
            }
            assertThat(workers.copiesRun()).isEqualTo(64);
            worker.zero();
            engine.flushSeals(); // sealing is asynchronous: the last round's blocks are indexed once it ran
            QueryOutcome hit = worker.query(EngineHarness.hashes(15, 4), "r");
            assertThat(hit.hitBlocks()).isEqualTo(4);
            assertThat(worker.load(hit.lease(), EngineHarness.ids(0, 4)).succeeded())
                    .isTrue();
            worker.verify(EngineHarness.ids(0, 4), new long[] {1060, 1061, 1062, 1063});
        }
    }

    @Test
    void shouldStopLeasedLanesWithTheEngineAndRefuseLaterLeases() {
        workers.lanes(0);
        engine.close();

        assertThat(workers.activeDevices()).isZero();
        assertThat(laneThreads()).doesNotContain("pega-push-dev0-save");
        assertThatThrownBy(() -> workers.lanes(0))
                .isInstanceOfSatisfying(
                        EngineException.class, e -> assertThat(e.kind()).isEqualTo(EngineException.Kind.UNAVAILABLE));
    }

    private static Set<String> laneThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .map(Thread::getName)
                .filter(n -> n.startsWith("pega-push-"))
                .collect(Collectors.toSet());
    }
}
