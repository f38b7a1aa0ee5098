package io.pegaflow.server.conformance;

import static io.pegaflow.server.conformance.ForeignProcess.call;
import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.pegaflow.proto.LeaseLoad;
import io.pegaflow.proto.QueryRequest;
import io.pegaflow.proto.SessionRequest;
import io.pegaflow.proto.UnregisterRequest;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.SessionHandle;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Decision 0011, defect 6: an instance id belongs to the principal (the OS user of the calling process) that registered
 * it or holds its Session. Another user's UnregisterContext, Session, RegisterContextBatch, Save, Load or QueryPrefetch
 * for it is PERMISSION_DENIED and changes nothing, over real gRPC from a real process of another uid
 * ({@link ForeignProcess}); the owner's bytes stay exact and its own calls keep working.
 */
@Timeout(180)
class InstanceOwnershipTest extends ConformanceSupport {
    private static final BlockPattern PATTERN = BlockPattern.perByte(67);
    private static final String DENIED = "PERMISSION_DENIED instance %s is registered by another user; only its owner"
            + " (the same OS user, or the same host when remote) can use or end it, and an operator can remove it"
            + " with POST /instances/cleanup";

    @Test
    void shouldRefuseEveryInstanceCallOfAnotherUser() throws IOException {
        try (MockVllmWorker victim = refWorker("victim").build();
                SessionHandle session = scheduler.openSession("victim", victim.namespace(), 1, 1)) {
            assertThat(session.awaitHeaders(WAIT)).isTrue();
            victim.register();
            victim.fillBlocks(blockIds(4), PATTERN);
            List<ByteString> hashes = BlockPattern.hashes(700, 4);
            victim.save(blockIds(4), hashes);
            scheduler.awaitHits("victim", hashes, 4, WAIT);
            LeaseLoad load = LeaseLoad.newBuilder()
                    .setLease(ByteString.copyFrom(new byte[16]))
                    .addAllBlockIds(blockIds(4))
                    .build();

            try (ForeignProcess intruder = ForeignProcess.run(
                    HOST,
                    port(),
                    call(
                            "unregister",
                            UnregisterRequest.newBuilder()
                                    .setInstanceId("victim")
                                    .build()),
                    call(
                            "session",
                            SessionRequest.newBuilder()
                                    .setInstanceId("victim")
                                    .setNamespace(victim.namespace())
                                    .setTpSize(1)
                                    .setWorldSize(1)
                                    .build()),
                    call("register", victim.registerRequest()),
                    call("save", victim.saveRequest(blockIds(4), BlockPattern.hashes(800, 4))),
                    call("load", victim.loadRequest("pega_nonexistent_state", List.of(load), victim.layerNames())),
                    call(
                            "query",
                            QueryRequest.newBuilder()
                                    .setInstanceId("victim")
                                    .addAllBlockHashes(hashes)
                                    .setReqId("steal")
                                    .build()))) {
                String denied = String.format(DENIED, "victim");
                for (int i = 0; i < 6; i++) {
                    assertThat(intruder.result(i))
                            .as("call %d of %s", i, intruder.output())
                            .isEqualTo(denied);
                }
            }

            assertThat(engine.instanceIds()).contains("victim");
            assertThat(session.isOpen()).as("the owner's Session").isTrue();
            assertThat(mappingsOf(shmOf(victim)))
                    .as("victim + its one server mapping")
                    .isEqualTo(2);
            assertThat(engine.cache().size()).as("nothing the intruder saved").isEqualTo(4);
            scheduler.awaitHits("victim", hashes, 4, WAIT);
            victim.zeroBlocks(blockIds(4));
            assertThat(victim.load(awaitReady("victim", hashes, 4, "owner").getLease(), blockIds(4))
                            .succeeded())
                    .isTrue();
            victim.verifyBlocks(blockIds(4), PATTERN);
            victim.unregister();
        }
    }

    @Test
    void shouldRefuseASecondSessionOfAnotherUserAndReleaseTheIdWithTheFirst() throws IOException {
        SessionRequest theirs = SessionRequest.newBuilder()
                .setInstanceId("foreign-owned")
                .setNamespace("ns")
                .setTpSize(1)
                .setWorldSize(1)
                .build();
        try (ForeignProcess owner = ForeignProcess.run(
                HOST,
                port(),
                call("session", theirs),
                call(
                        "unregister",
                        UnregisterRequest.newBuilder()
                                .setInstanceId("foreign-owned")
                                .build()))) {
            assertThat(owner.result(0)).isEqualTo("OPEN");
            assertThat(owner.result(1))
                    .as("its own id: not registered, not refused")
                    .isEqualTo("FAILED_PRECONDITION instance foreign-owned not found");

            SessionHandle second = scheduler.openSession("foreign-owned", "ns", 1, 1);
            Status refused = second.awaitClosed(WAIT).orElseThrow();
            assertThat(refused.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
            assertThat(refused.getDescription())
                    .isEqualTo(String.format(DENIED, "foreign-owned").substring("PERMISSION_DENIED ".length()));
            try (MockVllmWorker squatter = refWorker("foreign-owned").build()) {
                assertThat(statusOf(squatter::register).getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
                assertThat(mappingsOf(shmOf(squatter))).as("nothing mapped").isEqualTo(1);
            }
        }
        // The owner's process ended and its Session with it: the id is free again.
        SessionHandle after = scheduler.openSession("foreign-owned", "ns", 1, 1);
        assertThat(after.awaitHeaders(Duration.ofSeconds(20))).isTrue();
        after.close();
    }
}
