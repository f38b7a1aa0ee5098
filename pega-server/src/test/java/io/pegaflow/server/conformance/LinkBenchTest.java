package io.pegaflow.server.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.bench.link.LinkBench;
import io.pegaflow.bench.link.LinkOptions;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.LayerRegion;
import io.pegaflow.testkit.MockVllmWorker;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The compiled client of the GPU run ({@link LinkBench}) against an instance another party registered, as on a GPU
 * machine where a torch process registers and the client only sends Save, QueryPrefetch and Load: every run completes,
 * and every byte each Load wrote equals what its Save read, replayed run by run (a later Save may read blocks an
 * earlier Load overwrote).
 */
@Timeout(120)
class LinkBenchTest extends ConformanceSupport {
    private static final int LAYERS = 4;
    private static final int BLOCKS = 64;
    private static final int COUNT = 24;

    @Test
    void shouldSaveQueryAndLoadScatteredBlocksByteExactRunAfterRun() {
        KvLayout layout = KvLayout.kvFirst(BLOCKS, 16, 1, 64, 2); // 2 KiB K and V ranges
        MockVllmWorker.Builder builder = bareWorker("link-bench");
        List<String> names = new ArrayList<>();
        for (int l = 0; l < LAYERS; l++) {
            names.add("model.layers." + l + ".self_attn.attn");
            builder.layer(names.get(l), layout);
        }
        try (MockVllmWorker w = builder.build()) {
            w.register();
            List<Integer> all = IntStream.range(0, BLOCKS).boxed().toList();
            w.fillBlocks(all, BlockPattern.perByte(41));
            byte[][][] expected = read(w); // [layer][block] = the block's ranges, in order

            String metrics = "http://" + HOST + ":" + httpPort() + "/actuator/prometheus";
            LinkOptions options = new LinkOptions(
                    HOST,
                    port(),
                    w.instanceId(),
                    names,
                    BLOCKS,
                    COUNT,
                    3,
                    7L,
                    "link-bench",
                    30,
                    metrics,
                    1 << 20,
                    2,
                    5);
            LinkBench.Report report = LinkBench.report(options);
            List<LinkBench.Run> runs = report.runs();
            assertThat(report.metricsCold()).contains("pegaflow_save_phase_seconds_count{phase=\"copy\"}");
            // Between the cold run and the measured ones: 2 warm-up cycles of a Save and 5 queries each, after the
            // 2 × 5 misses before the cold run.
            assertThat(calls(report.metricsColdAfter(), "save") - calls(report.metricsCold(), "save"))
                    .isEqualTo(1);
            assertThat(calls(report.metricsBefore(), "save") - calls(report.metricsColdAfter(), "save"))
                    .isEqualTo(2);
            assertThat(calls(report.metricsBefore(), "load") - calls(report.metricsColdAfter(), "load"))
                    .isEqualTo(2);
            assertThat(calls(report.metricsBefore(), "query_prefetch")
                            - calls(report.metricsColdAfter(), "query_prefetch"))
                    .isGreaterThanOrEqualTo(2 * 5);
            assertThat(calls(report.metricsCold(), "query_prefetch")).isGreaterThanOrEqualTo(2 * 5);
            assertThat(report.metricsBefore()).contains("pegaflow_save_phase_seconds_count{phase=\"copy\"}");
            assertThat(report.metricsAfter()).contains("pegaflow_load_phase_seconds_count{phase=\"copy\"}");

            assertThat(runs).hasSize(4);
            for (LinkBench.Run run : runs) {
                assertThat(run.saveIds()).hasSize(COUNT).doesNotHaveDuplicates();
                assertThat(run.loadIds()).hasSize(COUNT).doesNotHaveDuplicates();
                assertThat(run.saveMs()).isPositive();
                assertThat(run.sendMs()).isPositive().isLessThan(run.saveMs());
                assertThat(run.loadMs()).isPositive();
                for (byte[][] layer : expected) {
                    byte[][] saved = new byte[COUNT][];
                    for (int i = 0; i < COUNT; i++) {
                        saved[i] = layer[run.saveIds()[i]];
                    }
                    for (int i = 0; i < COUNT; i++) {
                        layer[run.loadIds()[i]] = saved[i];
                    }
                }
            }
            byte[][][] actual = read(w);
            for (int l = 0; l < LAYERS; l++) {
                for (int b = 0; b < BLOCKS; b++) {
                    assertThat(Arrays.equals(actual[l][b], expected[l][b]))
                            .as("layer %d block %d", l, b)
                            .isTrue();
                }
            }
        }
    }

    /** The server's count of successful {@code method} RPCs in a Prometheus text. */
    private static long calls(String prometheus, String method) {
        String key = "pegaflow_rpc_duration_seconds_count{method=\"" + method + "\",status=\"ok\"} ";
        return prometheus
                .lines()
                .filter(line -> line.startsWith(key))
                .mapToLong(line -> (long) Double.parseDouble(line.substring(key.length())))
                .sum();
    }

    private static byte[][][] read(MockVllmWorker w) {
        byte[][][] out = new byte[w.layers().size()][BLOCKS][];
        for (int l = 0; l < out.length; l++) {
            LayerRegion layer = w.layers().get(l);
            int range = (int) layer.layout().rangeBytes();
            int ranges = layer.layout().rangesPerBlock();
            for (int b = 0; b < BLOCKS; b++) {
                byte[] block = new byte[range * ranges];
                for (int r = 0; r < ranges; r++) {
                    System.arraycopy(
                            layer.memory().readBytes(layer.rangeOffset(b, r), range), 0, block, r * range, range);
                }
                out[l][b] = block;
            }
        }
        return out;
    }
}
