package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.ConnectorRelease;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockVllmWorker;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.test.context.TestPropertySource;

/**
 * {@code pega.compat.*} widens and narrows the version gate: listed versions register with the generation they name
 * (or imply), and a generation left out of {@code pega.compat.generations} is refused with the gate's text.
 */
@Timeout(120)
@TestPropertySource(
        properties = {
            "pega.compat.extra-versions=0.26.0,0.23.6+native-arena-v1,0.30.0=G2",
            "pega.compat.generations=G2,G3"
        })
class CompatPropertiesTest extends ConformanceSupport {
    private static final KvLayout LAYOUT = KvLayout.contiguous(4, 1024);

    private MockVllmWorker.Builder worker(String id, ConnectorRelease release) {
        return bareWorker(id).namespace("ns-" + id).connector(release).layer("layer_0", LAYOUT);
    }

    @Test
    void shouldAcceptListedVersionsWithTheirGenerations() {
        try (MockVllmWorker newer = worker("newer", ConnectorRelease.V0_23_12.withVersion("0.26.0"))
                        .build();
                MockVllmWorker tagged = worker("tagged", ConnectorRelease.V0_23_6.withVersion("0.23.6+native-arena-v1"))
                        .build();
                MockVllmWorker pinned = worker("pinned", ConnectorRelease.V0_23_6.withVersion("0.30.0"))
                        .build()) {
            newer.register();
            tagged.register();
            pinned.register();

            assertThat(engine.status().instanceSummaries())
                    .extracting(s -> s.id() + "=" + s.generation())
                    .containsExactlyInAnyOrder("newer=G3", "tagged=G2", "pinned=G2");
            for (MockVllmWorker w : List.of(newer, tagged, pinned)) {
                List<ByteString> hashes = BlockPattern.hashes(w.instanceId().length(), 4);
                w.fillBlocks(blockIds(4), 7);
                w.save(blockIds(4), hashes);
                QueryReady ready = awaitReady(w.instanceId(), hashes, 4, "compat");
                w.zeroBlocks(blockIds(4));
                assertThat(w.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
                w.verifyBlocks(blockIds(4), 7);
            }
        }
    }

    @Test
    void shouldRefuseGenerationsLeftOut() {
        for (ConnectorRelease release : List.of(ConnectorRelease.V0_22_4, ConnectorRelease.V0_22_8)) {
            try (MockVllmWorker w = worker("old", release).build()) {
                Status status = statusOf(w::register);
                assertThat(status.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                String client = release.clientVersion().isEmpty() ? "<missing>" : release.clientVersion();
                assertThat(status.getDescription())
                        .startsWith("PegaFlow version mismatch: client=" + client + " server=pega-server-")
                        .contains("accepts connector versions 0.22.9-0.23.6, 0.23.7-0.23.12, 0.24.x, 0.25.x");
            }
        }
    }
}
