package io.pegaflow.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.pegaflow.testkit.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fleet simulator of pega-benchmarks, run as docs/metaserver.md runs it, against the packaged metaserver: 20
 * simulated servers for a few seconds with bursts and crashes. Asserts what must hold on any machine, never a time:
 * the run ends with status 0, every acknowledged announcement is accounted for (no drops, and the metaserver's
 * count of the live sessions' records equals the simulator's), every re-join's fence check was refused, and the
 * three report files exist.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class FleetSimulatorIT {

    @TempDir
    Path dir;

    @Test
    void shouldAccountForEveryAnnouncementOfASmallFleetWithCrashes() throws Exception {
        int[] ports = ChildJvm.freePorts(2);
        ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", ports[0])
                .usePlaintext()
                .build();
        try (ChildJvm metaserver = MetaserverLauncher.start(
                "metaserver",
                dir,
                channel,
                ports[0],
                ports[1],
                List.of(
                        "--pega.metaserver.db-path=" + dir.resolve("db/metaserver"),
                        "--pega.metaserver.node-stale-secs=2"))) {
            List<String> args = new ArrayList<>(List.of(
                    "-cp",
                    PackagedJars.path("pega.it.benchmarksJar"),
                    "io.pegaflow.bench.fleet.FleetSimulator",
                    "--targets=127.0.0.1:" + ports[0],
                    "--metrics=http://127.0.0.1:" + ports[1],
                    "--gc-pids=" + metaserver.process().pid(),
                    "--nodes=20",
                    "--prefill-tokens-per-gpu=500",
                    "--resident-blocks=512",
                    "--warmup=2s",
                    "--duration=5s",
                    "--burst-every=2s",
                    "--burst-length=500ms",
                    "--crash-every=1s",
                    "--crash-downtime=200ms",
                    "--report=fleet.md",
                    "--json=fleet.json",
                    "--plot=fleet.svg"));
            ChildJvm simulator = ChildJvm.runToExit("fleet-simulator", dir, args, Duration.ofMinutes(3));
            assertThat(simulator.process().exitValue())
                    .as("simulator exit status; it logged:\n%s", simulator.logText())
                    .isZero();

            String report = Files.readString(dir.resolve("fleet.json"));
            assertThat(number(report, "$.insertedBlocks")).isPositive();
            assertThat(number(report, "$.removedBlocks")).isPositive();
            assertThat(number(report, "$.queries")).isPositive();
            assertThat(number(report, "$.correctness.unexplainedDrops")).isZero();
            assertThat(number(report, "$.correctness.droppedRemovals")).isZero();
            assertThat(number(report, "$.correctness.fenceViolations")).isZero();
            assertThat(number(report, "$.correctness.crashes")).isPositive();
            // each takeover is followed by one write with the superseded node_id, which must be refused
            assertThat(number(report, "$.correctness.fencedWritesRefused"))
                    .isEqualTo(number(report, "$.correctness.rejoins"));
            assertThat(number(report, "$.metaserver.liveSessionRecordsMetaserver"))
                    .isEqualTo(number(report, "$.metaserver.liveSessionRecordsSimulator"))
                    .isPositive();
            assertThat(Files.readString(dir.resolve("fleet.md"))).contains("| QueryPrefixBlocks |");
            assertThat(Files.readString(dir.resolve("fleet.svg"))).startsWith("<svg");
        } finally {
            channel.shutdownNow();
        }
    }

    private static long number(String json, String path) {
        Object v = JsonPath.read(json, path);
        assertThat(v).as("report field %s", path).isInstanceOf(Number.class);
        return ((Number) v).longValue();
    }
}
