package io.pegaflow.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.jayway.jsonpath.JsonPath;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.StatusRuntimeException;
import io.pegaflow.proto.MetaServerGrpc;
import io.pegaflow.proto.QueryPrefixBlocksRequest;
import io.pegaflow.testkit.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
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

    private static String jar(String property) {
        String jar = System.getProperty(property);
        assertThat(jar).as("system property %s (set by the pom)", property).isNotNull();
        assertThat(Path.of(jar))
                .as("the packaged jar; build it with ./mvnw package")
                .exists();
        return jar;
    }

    @Test
    void shouldAccountForEveryAnnouncementOfASmallFleetWithCrashes() throws Exception {
        int[] ports = ChildJvm.freePorts(2);
        ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", ports[0])
                .usePlaintext()
                .build();
        MetaServerGrpc.MetaServerBlockingStub stub = MetaServerGrpc.newBlockingStub(channel);
        BooleanSupplier answers = () -> {
            try {
                stub.withDeadlineAfter(2, TimeUnit.SECONDS)
                        .queryPrefixBlocks(QueryPrefixBlocksRequest.newBuilder()
                                .setNamespace("probe")
                                .addBlockHashes(ByteString.copyFromUtf8("probe"))
                                .build());
                return true;
            } catch (StatusRuntimeException notYet) {
                return false;
            }
        };
        try (ChildJvm metaserver = ChildJvm.start(
                "metaserver",
                dir,
                List.of(
                        "-jar",
                        jar("pega.it.metaserverJar"),
                        "--pega.metaserver.addr=127.0.0.1:" + ports[0],
                        "--pega.metaserver.http-addr=127.0.0.1:" + ports[1],
                        "--pega.metaserver.db-path=" + dir.resolve("db/metaserver"),
                        "--pega.metaserver.node-stale-secs=2",
                        "--logging.level.root=WARN"),
                answers)) {
            List<String> args = new ArrayList<>(List.of(
                    "-cp",
                    jar("pega.it.benchmarksJar"),
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
