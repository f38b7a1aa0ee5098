package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.pegaflow.core.metrics.LoadPhase;
import io.pegaflow.core.metrics.SavePhase;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.MockVllmWorker;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * Every phase of {@code pegaflow_save_phase_seconds} and {@code pegaflow_load_phase_seconds} is recorded once per
 * Save and Load over real gRPC, and no phase of one request takes longer than the whole RPC did.
 */
@Timeout(120)
class PhaseTimingTest extends ConformanceSupport {
    private static final BlockPattern PATTERN = BlockPattern.perByte(33);

    @Autowired
    MeterRegistry registry;

    private Timer timer(String name, String phase) {
        Timer t = registry.find(name).tag("phase", phase).timer();
        assertThat(t).as(name + "{phase=" + phase + "}").isNotNull();
        return t;
    }

    private <P extends Enum<P>> Map<P, long[]> snapshot(String name, Class<P> type, Function<P, String> label) {
        Map<P, long[]> out = new EnumMap<>(type);
        for (P p : type.getEnumConstants()) {
            Timer t = timer(name, label.apply(p));
            out.put(p, new long[] {t.count(), (long) t.totalTime(TimeUnit.NANOSECONDS)});
        }
        return out;
    }

    private double rpcSeconds(String method) {
        Timer t = registry.find("pegaflow_rpc_duration")
                .tag("method", method)
                .tag("status", "ok")
                .timer();
        return t == null ? 0 : t.totalTime(TimeUnit.SECONDS);
    }

    @Test
    void shouldRecordEverySaveAndLoadPhaseOncePerRequest() {
        try (MockVllmWorker w = refWorker("phases").build()) {
            w.register();
            Map<SavePhase, long[]> save0 = snapshot("pegaflow_save_phase", SavePhase.class, SavePhase::label);
            Map<LoadPhase, long[]> load0 = snapshot("pegaflow_load_phase", LoadPhase.class, LoadPhase::label);
            double saveRpc0 = rpcSeconds("save");

            List<ByteString> hashes = BlockPattern.hashes(700, 4);
            w.fillBlocks(blockIds(4), PATTERN);
            w.save(blockIds(4), hashes);
            QueryReady ready = awaitReady(w.instanceId(), hashes, 4, "phases");
            w.zeroBlocks(blockIds(4));
            assertThat(w.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            w.verifyBlocks(blockIds(4), PATTERN);

            double saveRpc = rpcSeconds("save") - saveRpc0;
            for (SavePhase p : SavePhase.values()) {
                Timer t = timer("pegaflow_save_phase", p.label());
                assertThat(t.count() - save0.get(p)[0])
                        .as("save phase " + p.label())
                        .isEqualTo(1);
                double seconds = (t.totalTime(TimeUnit.NANOSECONDS) - save0.get(p)[1]) / 1e9;
                if (p != SavePhase.REPLY) { // the reply's timer stops after the RPC's own
                    assertThat(seconds).as("save phase " + p.label()).isLessThanOrEqualTo(saveRpc);
                }
            }
            // copy and signal end on the load lane, mostly after the reply; the worker saw the signal already
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                for (LoadPhase p : LoadPhase.values()) {
                    assertThat(timer("pegaflow_load_phase", p.label()).count() - load0.get(p)[0])
                            .as("load phase " + p.label())
                            .isEqualTo(1);
                }
            });
        }
    }
}
