package io.pegaflow.push.layout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.device.Caller;
import io.pegaflow.core.device.host.HostDeviceBackend;
import io.pegaflow.core.engine.DeviceWorkers;
import io.pegaflow.core.engine.EngineConfig;
import io.pegaflow.core.engine.EngineContext;
import io.pegaflow.core.engine.EngineLimits;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.Principal;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.LayerRegion;
import io.pegaflow.testkit.MockVllmWorker;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A push registration takes the engine's copy lanes of its device under the engine's device limit: refused with
 * RESOURCE_EXHAUSTED when they would pass it, leaving no mapping, no budget and no hold on the instance id behind;
 * admitted otherwise, with the lanes shared by every registration on the device and stopped with the last one.
 */
@Timeout(60)
class PushLayerTableLanesTest {
    /** One device context in all. */
    private static final EngineLimits ONE_DEVICE = new EngineLimits(0.5, 256, 64, 1, 2, 16384, 1024);

    private PegaEngine engine;
    private PushLayerTable table;
    private MockVllmWorker worker;
    private MockVllmWorker otherWorker;

    @BeforeEach
    void start() {
        engine = PegaEngine.launch(new EngineContext()
                .config(EngineConfig.defaults(PoolConfig.of(8L << 20)))
                .pool(PinnedMemoryPool.create(PoolConfig.of(8L << 20)))
                .backend(new HostDeviceBackend())
                .limits(ONE_DEVICE));
        table = new PushLayerTable(engine.workers(), engine.sideRegistrations());
        // its channel is never used: the worker only owns the layer memory
        worker = worker("lanes");
        otherWorker = worker("other");
    }

    private static MockVllmWorker worker(String instanceId) {
        return MockVllmWorker.builder("127.0.0.1", 1)
                .instanceId(instanceId)
                .sharedLayers(List.of("l0", "l1"), KvLayout.kvFirst(8, 16, 2, 64, 2))
                .build();
    }

    @AfterEach
    void stop() {
        table.close();
        engine.close();
        worker.close();
        otherWorker.close();
    }

    @Test
    void shouldRefuseARegistrationWhoseDeviceLanesWouldPassTheDeviceLimitAndLeaveNothingBehind() {
        DeviceWorkers.Lanes other = engine.workers().lanes(0);

        assertThatThrownBy(() -> register(worker, 1)).isInstanceOfSatisfying(EngineException.class, e -> {
            assertThat(e.kind()).isEqualTo(EngineException.Kind.RESOURCE_EXHAUSTED);
            assertThat(e.getMessage()).contains("pega.limits.devices");
        });
        assertThat(table.size()).isZero();
        assertThat(engine.mappedObjectCount()).isZero();
        engine.sideRegistrations().admit("lanes", Principal.uid(1_000_001), 1).close();

        RankLayers first = register(worker, 0);
        RankLayers second = register(otherWorker, 0);
        assertThat(engine.deviceCount()).as("one lane pair per device, shared").isEqualTo(1);
        other.close();
        table.instanceEnded("lanes");
        assertThat(engine.workers().activeDevices()).isEqualTo(1);
        table.instanceEnded("other");
        assertThat(engine.workers().activeDevices()).isZero();
        assertThat(engine.deviceCount()).isZero();
        assertThat(engine.mappedObjectCount()).isZero();
        assertThat(first.inUse() || second.inUse()).isFalse();
    }

    private RankLayers register(MockVllmWorker w, int deviceId) {
        String instanceId = w.instanceId();
        List<PushLayerSpec> layers = new ArrayList<>();
        for (LayerRegion r : w.layers()) {
            KvLayout l = r.layout();
            layers.add(new PushLayerSpec(
                    r.name(), r.descriptor(), l.numBlocks(), l.bytesPerBlock(), l.kvStrideBytes(), l.segments()));
        }
        return table.register(Caller.inProcess(instanceId), Principal.inProcess(), instanceId, 0, 1, deviceId, layers);
    }
}
