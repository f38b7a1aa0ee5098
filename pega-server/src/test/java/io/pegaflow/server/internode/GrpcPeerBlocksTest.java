package io.pegaflow.server.internode;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.node.remote.PeerBlocks.Grant;
import io.pegaflow.node.remote.PeerBlocks.Slot;
import io.pegaflow.proto.QueryBlocksForTransferResponse;
import io.pegaflow.proto.TransferBlockInfo;
import io.pegaflow.proto.TransferSlotInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The owner's {@code QueryBlocksForTransfer} answer as the remote tier reads it: every field, unsigned as sent. */
@Timeout(30)
class GrpcPeerBlocksTest {

    @Test
    void shouldCarryEveryBlockAndSegmentOfTheAnswerInOrder() {
        QueryBlocksForTransferResponse answer = QueryBlocksForTransferResponse.newBuilder()
                .setTransferSessionId("session-1")
                .setLockTimeoutSecs(120)
                .addBlocks(TransferBlockInfo.newBuilder()
                        .setBlockHash(ByteString.copyFromUtf8("a"))
                        .addSlots(TransferSlotInfo.newBuilder()
                                .setKPtr(4096)
                                .setKSize(512)
                                .setVPtr(8192)
                                .setVSize(512)))
                .addBlocks(TransferBlockInfo.newBuilder()
                        .setBlockHash(ByteString.copyFromUtf8("b"))
                        .addSlots(TransferSlotInfo.newBuilder().setKPtr(16384).setKSize(1024)))
                .build();
        Grant grant = GrpcPeerBlocks.grant(answer);
        assertThat(grant.session()).isEqualTo("session-1");
        assertThat(grant.lockTimeoutSeconds()).isEqualTo(120);
        assertThat(grant.blocks()).hasSize(2);
        assertThat(grant.blocks().get(0).hash()).isEqualTo(new byte[] {'a'});
        assertThat(grant.blocks().get(0).slots()).containsExactly(new Slot(4096, 512, 8192, 512));
        assertThat(grant.blocks().get(1).hash()).isEqualTo(new byte[] {'b'});
        assertThat(grant.blocks().get(1).slots()).containsExactly(new Slot(16384, 1024, 0, 0));
    }

    @Test
    void shouldReadTheLockTimeoutAsUnsigned() {
        Grant grant = GrpcPeerBlocks.grant(QueryBlocksForTransferResponse.newBuilder()
                .setLockTimeoutSecs(-1)
                .build());
        assertThat(grant.lockTimeoutSeconds())
                .as("lock_timeout_secs is unsigned")
                .isEqualTo(0xFFFFFFFFL);
        assertThat(grant.session()).as("no lock, nothing to release").isEmpty();
        assertThat(grant.blocks()).isEmpty();
    }
}
