package io.pegaflow.node.remote;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.node.remote.PeerBlocks.Grant;
import io.pegaflow.node.remote.PeerBlocks.LockedBlock;
import io.pegaflow.node.remote.PeerBlocks.Slot;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which part of an owner's answer the remote tier uses: the leading blocks that are the keys asked, in order, each
 * with as many slots as the first and segments it can rebuild (segment 0 present; segment 1 absent or as long).
 * Anything else ends the prefix there, so a short, reordered or foreign answer is a shorter prefix, never a wrong block.
 */
class RemoteFetchTierTest {
    static final String NS = "ns";

    static BlockKey key(String h) {
        return new BlockKey(NS, h.getBytes(StandardCharsets.UTF_8));
    }

    static Slot slot(long k, long kSize, long v, long vSize) {
        return new Slot(k, kSize, v, vSize);
    }

    static LockedBlock block(String h, Slot... slots) {
        return new LockedBlock(h.getBytes(StandardCharsets.UTF_8), List.of(slots));
    }

    static Grant grant(LockedBlock... blocks) {
        return new Grant("", 0, List.of(blocks));
    }

    final List<BlockKey> asked = List.of(key("a"), key("b"), key("c"));
    final Slot split = slot(4096, 512, 8192, 512);
    final Slot contiguous = slot(4096, 1024, 0, 0);

    @Test
    void shouldUseEveryBlockOfAFullAnswer() {
        assertThat(RemoteFetchTier.usablePrefix(asked, grant(block("a", split), block("b", split), block("c", split))))
                .isEqualTo(3);
        assertThat(RemoteFetchTier.usablePrefix(asked, grant(block("a", contiguous), block("b", contiguous))))
                .as("a short answer")
                .isEqualTo(2);
    }

    @Test
    void shouldStopAtTheFirstBlockThatIsNotTheKeyAsked() {
        // the owner skips misses: "b" was evicted, so the second block is "c"
        assertThat(RemoteFetchTier.usablePrefix(asked, grant(block("a", split), block("c", split))))
                .isEqualTo(1);
        assertThat(RemoteFetchTier.usablePrefix(asked, grant(block("x", split))))
                .isZero();
    }

    @Test
    void shouldStopAtABlockItCannotRebuild() {
        assertThat(RemoteFetchTier.usablePrefix(asked, grant(block("a", split), block("b", split, split))))
                .as("another slot count")
                .isEqualTo(1);
        assertThat(RemoteFetchTier.usablePrefix(
                        asked, grant(block("a", split), block("b", slot(4096, 512, 8192, 256)))))
                .as("K and V of different lengths")
                .isEqualTo(1);
        assertThat(RemoteFetchTier.usablePrefix(asked, grant(block("a", slot(0, 512, 0, 0)))))
                .as("a null address")
                .isZero();
        assertThat(RemoteFetchTier.usablePrefix(asked, grant(block("a", slot(4096, 512, 0, 512)))))
                .as("a V length without an address")
                .isZero();
        assertThat(RemoteFetchTier.usablePrefix(asked, grant(block("a"))))
                .as("no slots")
                .isZero();
    }

    static Grant lockedFor(long seconds) {
        return new Grant("session", seconds, List.of());
    }

    @Test
    void shouldEndTheGetsBeforeTheLockTheOwnerReportedCountedFromTheQuery() {
        long sent = 5_000_000_000L;
        assertThat(RemoteFetchTier.lockDeadline(sent, lockedFor(120)))
                .as("120 s less 2 %")
                .isEqualTo(sent + 117_600_000_000L);
        assertThat(RemoteFetchTier.lockDeadline(sent, lockedFor(3))).isEqualTo(sent + 2_940_000_000L);
        assertThat(RemoteFetchTier.lockDeadline(sent, lockedFor(0)))
                .as("an owner that reports no time gives none")
                .isEqualTo(sent);
        // the gRPC adapter reads lock_timeout_secs as unsigned (GrpcPeerBlocksTest): its largest value
        assertThat(RemoteFetchTier.lockDeadline(sent, lockedFor(0xFFFFFFFFL)))
                .as("lock_timeout_secs is unsigned")
                .isEqualTo(sent + 0xFFFFFFFFL * 1_000_000_000L - 0xFFFFFFFFL * 1_000_000_000L / 50);
    }
}
