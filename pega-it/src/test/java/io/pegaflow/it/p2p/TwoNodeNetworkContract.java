package io.pegaflow.it.p2p;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.jayway.jsonpath.JsonPath;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.it.net.Site;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.HealthRequest;
import io.pegaflow.proto.HealthResponse;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What two pega-servers and a metaserver at two sites see of each other, run once per kind of site: both nodes
 * register with the metaserver under their own addresses, and a client at one site reaches the other's gRPC port.
 * One set of processes per class (they take most of the time on a 2-core CI machine).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 300, unit = TimeUnit.SECONDS)
abstract class TwoNodeNetworkContract {
    static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    static Path dir;

    TwoNodeCluster cluster;

    /** The two sites, or a JUnit assumption failure saying why this machine cannot make them. */
    abstract List<Site> sites() throws IOException;

    /** Called after every process has stopped. */
    void afterCluster() {}

    /** Arguments every server gets beside those of {@link TwoNodeCluster}. */
    List<String> serverArgs() {
        return List.of();
    }

    @BeforeAll
    void startCluster() throws IOException {
        List<Site> sites = sites();
        cluster = TwoNodeCluster.start(dir, sites.get(0), sites.get(1), serverArgs());
    }

    @AfterAll
    void stopCluster() {
        try {
            if (cluster != null) {
                cluster.close();
            }
        } finally {
            afterCluster();
        }
    }

    static ManagedChannel channel(int localPort) {
        return ManagedChannelBuilder.forAddress("127.0.0.1", localPort)
                .usePlaintext()
                .build();
    }

    static HealthResponse health(ManagedChannel channel) {
        return EngineGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .health(HealthRequest.getDefaultInstance());
    }

    private boolean bothLive() {
        String json = cluster.metaserverNodesJson();
        if (json == null || !json.contains("\"nodes\"")) {
            return false;
        }
        List<String> live = JsonPath.read(json, "$.nodes[?(@.state == 'live')].node");
        return live.contains(cluster.a().advertised())
                && live.contains(cluster.b().advertised());
    }

    @Test
    void shouldRegisterEachNodeWithTheMetaserverUnderItsOwnAddress() {
        try {
            await().atMost(WAIT).until(this::bothLive);
        } catch (RuntimeException | AssertionError e) {
            throw new AssertionError(
                    "both nodes live in /api/nodes: " + cluster.metaserverNodesJson() + cluster.logs(), e);
        }
        assertThat(cluster.a().advertised()).isNotEqualTo(cluster.b().advertised());
    }

    @Test
    void shouldReachTheOtherNodesGrpcPortFromEachSite() throws IOException {
        TwoNodeCluster.Node a = cluster.a();
        TwoNodeCluster.Node b = cluster.b();
        ManagedChannel fromB = channel(b.site().dial(a.site().address(), a.grpcPort()));
        ManagedChannel fromA = channel(a.site().dial(b.site().address(), b.grpcPort()));
        try {
            assertThat(health(fromB).getStatus().getOk()).isTrue();
            assertThat(health(fromA).getStatus().getOk()).isTrue();
        } finally {
            fromB.shutdownNow();
            fromA.shutdownNow();
        }
    }

    /** A gRPC call through {@code localPort} fails as a refused connection does. */
    static void assertUnreachable(int localPort) {
        ManagedChannel channel = channel(localPort);
        try {
            assertThatThrownBy(() -> health(channel))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        } finally {
            channel.shutdownNow();
        }
    }
}
