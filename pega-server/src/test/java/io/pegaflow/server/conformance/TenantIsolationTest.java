package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.pegaflow.proto.RegisterContextRequest;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.MockVllmWorker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The server opens a worker's shared memory with its own privileges, so it must only open what the caller itself owns
 * (decision 0006, defect 10): a descriptor that names another user's object, or an object another instance has
 * registered, is refused before anything is mapped, and the victim's bytes stay exact.
 */
@Timeout(120)
class TenantIsolationTest extends ConformanceSupport {
    private static final BlockPattern PATTERN = BlockPattern.perByte(91);

    /** The victim's request with its descriptor, sent by another instance. */
    private static RegisterContextRequest naming(MockVllmWorker victim, MockVllmWorker thief) {
        return thief.registerRequest().toBuilder()
                .setWrapperBytes(0, victim.registerRequest().getWrapperBytes(0))
                .build();
    }

    @Test
    void shouldRefuseAnObjectAnotherInstanceRegistered() {
        try (MockVllmWorker victim = refWorker("victim").build();
                MockVllmWorker thief = refWorker("thief").build()) {
            victim.register();
            victim.fillBlocks(blockIds(4), PATTERN);

            Status status = statusOf(() -> thief.stub().registerContextBatch(naming(victim, thief)));

            assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(status.getDescription())
                    .isEqualTo("invalid argument: host descriptor: /dev/shm/" + shmOf(victim)
                            + " is registered by another instance");
            assertThat(engine.instanceIds()).doesNotContain("thief");
            assertThat(mappingsOf(shmOf(victim)))
                    .as("victim + its one server mapping")
                    .isEqualTo(2);
            victim.verifyBlocks(blockIds(4), PATTERN);
        }
    }

    @Test
    void shouldRefuseAnObjectOwnedByAnotherUser() throws IOException {
        try (MockVllmWorker w = refWorker("foreign-owner").build()) {
            Path object = Path.of("/dev/shm", shmOf(w));
            int mine = (Integer) Files.getAttribute(object, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            int other = mine + 4242;
            Files.setAttribute(object, "unix:uid", other, LinkOption.NOFOLLOW_LINKS);
            try {
                Status status = statusOf(w::register);

                assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                assertThat(status.getDescription())
                        .isEqualTo("invalid argument: host descriptor: " + object + " belongs to uid " + other
                                + ", not to the caller (uid " + mine + ")");
                assertThat(mappingsOf(shmOf(w))).isEqualTo(1);
            } finally {
                Files.setAttribute(object, "unix:uid", mine, LinkOption.NOFOLLOW_LINKS);
            }
            w.register();
            w.fillBlocks(blockIds(4), PATTERN);
            w.save(blockIds(4), BlockPattern.hashes(900, 4));
            scheduler.awaitHits(w.instanceId(), BlockPattern.hashes(900, 4), 4, WAIT);
        }
    }

    @Test
    void shouldLetTheOwnerRegisterAgainAfterItUnregistered() {
        try (MockVllmWorker first = refWorker("first-owner").build()) {
            first.register();
            first.unregister();
            RegisterContextRequest again = first.registerRequest().toBuilder()
                    .setInstanceId("second-owner")
                    .setWrapperBytes(
                            0,
                            ByteString.copyFrom(
                                    first.registerRequest().getWrapperBytes(0).toByteArray()))
                    .build();

            first.stub().registerContextBatch(again);

            assertThat(engine.instanceIds()).contains("second-owner");
        }
    }
}
