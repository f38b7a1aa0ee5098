package io.pegaflow.metaserver.index;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.metaserver.node.NodeSession;
import io.pegaflow.metaserver.support.AdjustableClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The block-owner index on its own: insert, owner-match remove, the prefix algorithm, visibility, bounds, sweep. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BlockOwnerIndexTest {

    static final long STALE_MS = 30_000;
    static final long TTL_MS = 120 * 60_000L;
    static final String NS = "model-a";

    final AdjustableClock clock = new AdjustableClock();
    final BlockOwnerIndex index = new BlockOwnerIndex(1_000_000, STALE_MS, TTL_MS);

    NodeSession node(String url) {
        return NodeSession.detached(url, UUID.randomUUID(), clock.millis());
    }

    static ByteString h(int i) {
        return ByteString.copyFrom(new byte[] {(byte) (i >> 24), (byte) (i >> 16), (byte) (i >> 8), (byte) i});
    }

    static List<ByteString> hashes(int... ids) {
        List<ByteString> out = new ArrayList<>();
        for (int id : ids) {
            out.add(h(id));
        }
        return out;
    }

    List<PrefixMatch> query(int... ids) {
        return index.queryPrefix(NS, hashes(ids), clock.millis());
    }

    @Test
    void shouldReturnEachNodesContiguousPrefix() {
        // The reference's worked example: A owns h1..h4, B owns h1,h2,h3,h5.
        NodeSession a = node("10.0.0.1:1");
        NodeSession b = node("10.0.0.2:1");
        index.insert(NS, hashes(1, 2, 3, 4), a, clock.millis());
        index.insert(NS, hashes(1, 2, 3, 5), b, clock.millis());

        assertThat(query(1, 2, 3, 4))
                .containsExactlyInAnyOrder(new PrefixMatch("10.0.0.1:1", 4), new PrefixMatch("10.0.0.2:1", 3));
        assertThat(query(1, 2, 3, 5))
                .containsExactlyInAnyOrder(new PrefixMatch("10.0.0.1:1", 3), new PrefixMatch("10.0.0.2:1", 4));
    }

    @Test
    void shouldFreezeANodeThatMissedAnEarlierHash() {
        NodeSession a = node("10.0.0.1:1");
        NodeSession b = node("10.0.0.2:1");
        index.insert(NS, hashes(1, 2, 3, 4), a, clock.millis());
        index.insert(NS, hashes(1, 3, 4), b, clock.millis());
        NodeSession c = node("10.0.0.3:1");
        index.insert(NS, hashes(2, 3, 4), c, clock.millis()); // never held hash 1: prefix 0, not reported

        assertThat(query(1, 2, 3, 4))
                .containsExactly(new PrefixMatch("10.0.0.1:1", 4), new PrefixMatch("10.0.0.2:1", 1));
    }

    @Test
    void shouldReturnNothingWhenTheFirstHashHasNoVisibleOwner() {
        NodeSession a = node("10.0.0.1:1");
        index.insert(NS, hashes(2, 3), a, clock.millis());
        assertThat(query(1, 2, 3)).isEmpty();
        assertThat(index.queryPrefix("other-model", hashes(2, 3), clock.millis()))
                .isEmpty();
    }

    @Test
    void shouldHideStaleAndEndedSessionsAndShowRevivedOnes() {
        NodeSession a = node("10.0.0.1:1");
        NodeSession b = node("10.0.0.2:1");
        index.insert(NS, hashes(1, 2), a, clock.millis());
        index.insert(NS, hashes(1, 2), b, clock.millis());
        clock.advance(Duration.ofMillis(STALE_MS + 1));

        assertThat(query(1, 2)).isEmpty(); // both stale: the global prefix stops at hash 1
        NodeSession revived = NodeSession.detached("10.0.0.2:1", b.id(), clock.millis());
        index.insert(NS, hashes(1, 2), revived, clock.millis());
        assertThat(query(1, 2)).containsExactly(new PrefixMatch("10.0.0.2:1", 2));
    }

    @Test
    void shouldReplaceTheRecordOfTheSameAddressAndCountEveryHash() {
        NodeSession old = node("10.0.0.1:1");
        index.insert(NS, hashes(1, 2), old, clock.millis());
        NodeSession fresh = node("10.0.0.1:1");

        assertThat(index.insert(NS, hashes(1, 1, 2), fresh, clock.millis())).isEqualTo(3);
        assertThat(index.ownerCount()).isEqualTo(2);
        assertThat(old.ownedBlocks()).isZero();
        assertThat(fresh.ownedBlocks()).isEqualTo(2);
        assertThat(query(1, 2)).containsExactly(new PrefixMatch("10.0.0.1:1", 2));
    }

    @Test
    void shouldRemoveOnlyRecordsOwnedByTheRequestingSession() {
        NodeSession a = node("10.0.0.1:1");
        NodeSession b = node("10.0.0.2:1");
        index.insert(NS, hashes(1, 2, 3), a, clock.millis());
        index.insert(NS, hashes(1), b, clock.millis());

        assertThat(index.remove(NS, hashes(1, 2, 9), "10.0.0.1:1", UUID.randomUUID()))
                .isZero();
        assertThat(index.remove(NS, hashes(1, 2, 2, 9), "10.0.0.1:1", a.id())).isEqualTo(2);

        assertThat(query(1)).containsExactly(new PrefixMatch("10.0.0.2:1", 1));
        assertThat(query(3)).containsExactly(new PrefixMatch("10.0.0.1:1", 1));
        assertThat(index.keyCount()).isEqualTo(2); // hash 2 lost its last owner and went away
        assertThat(index.ownerCount()).isEqualTo(2);
    }

    @Test
    void shouldKeepTheInsertWhenARemoveByAnotherNodeRaces() throws Exception {
        NodeSession a = node("10.0.0.1:1");
        NodeSession b = node("10.0.0.2:1");
        for (int round = 0; round < 500; round++) {
            List<ByteString> key = hashes(round);
            index.insert(NS, key, a, clock.millis());
            CyclicBarrier start = new CyclicBarrier(2);
            Thread remover = new Thread(() -> {
                await(start);
                index.remove(NS, key, a.url(), a.id());
            });
            remover.start();
            await(start);
            index.insert(NS, key, b, clock.millis());
            remover.join();

            assertThat(index.queryPrefix(NS, key, clock.millis())).containsExactly(new PrefixMatch(b.url(), 1));
        }
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void shouldStayWithinItsBound() {
        BlockOwnerIndex small = new BlockOwnerIndex(100, STALE_MS, TTL_MS);
        NodeSession a = node("10.0.0.1:1");
        for (int i = 0; i < 1_000; i += 10) {
            small.insert(NS, hashes(i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7, i + 8, i + 9), a, 0);
        }
        small.cleanUp();

        assertThat(small.keyCount()).isLessThanOrEqualTo(100);
        assertThat(small.evictedKeys()).isEqualTo(1_000 - small.keyCount());
        assertThat(small.ownerCount()).isEqualTo(small.keyCount());
        assertThat(a.ownedBlocks()).isEqualTo(small.keyCount());
    }

    @Test
    void shouldDropANodesOwnOldestRecordsPastItsShareAndKeepTheOthers() {
        BlockOwnerIndex shared = new BlockOwnerIndex(100, 25, STALE_MS, TTL_MS);
        NodeSession a = node("10.0.0.1:1");
        NodeSession b = node("10.0.0.2:1");
        shared.insert(NS, hashes(0, 1, 2, 3, 4), b, 0);
        for (int i = 1_000; i < 2_000; i += 5) {
            shared.insert(NS, hashes(i, i + 1, i + 2, i + 3, i + 4), a, 0);
        }
        shared.cleanUp();

        assertThat(a.ownedBlocks()).isEqualTo(25);
        assertThat(b.ownedBlocks()).isEqualTo(5);
        assertThat(shared.evictedKeys()).as("nothing evicted by the size bound").isZero();
        assertThat(shared.shareEvictedRecords()).isEqualTo(1_000 - 25);
        assertThat(shared.queryPrefix(NS, hashes(0, 1, 2, 3, 4), clock.millis()))
                .hasSize(1);
        assertThat(shared.queryPrefix(NS, hashes(1_975), clock.millis())).hasSize(1);
        assertThat(shared.queryPrefix(NS, hashes(1_974), clock.millis())).isEmpty();
    }

    @Test
    void shouldSweepExpiredAndOrphanedRecords() {
        NodeSession a = node("10.0.0.1:1");
        NodeSession b = node("10.0.0.2:1");
        index.insert(NS, hashes(1, 2), a, clock.millis());
        index.insert(NS, hashes(1), b, clock.millis());
        clock.advance(Duration.ofMinutes(60));
        NodeSession c = node("10.0.0.3:1");
        index.insert(NS, hashes(3), c, clock.millis());

        assertThat(index.sweep(clock.millis()).isEmpty()).isTrue();

        // A record not re-announced within the TTL goes even while its node is alive.
        clock.advance(Duration.ofMinutes(61));
        SweepStats stats = index.sweep(clock.millis());
        assertThat(stats.removedOwners()).isEqualTo(3);
        assertThat(stats.removedKeys()).isEqualTo(2);
        assertThat(index.ownerCount()).isEqualTo(1);
        assertThat(a.ownedBlocks()).isZero();
    }

    @Test
    void shouldRemoveAllRecordsOfOneSessionOnUnregister() {
        NodeSession a = node("10.0.0.1:1");
        NodeSession b = node("10.0.0.2:1");
        index.insert(NS, hashes(1, 2, 3), a, clock.millis());
        index.insert("other", hashes(1), a, clock.millis());
        index.insert(NS, hashes(1), b, clock.millis());

        assertThat(index.removeOwners(a.url(), UUID.randomUUID())).isZero();
        assertThat(index.removeOwners(a.url(), a.id())).isEqualTo(4);
        assertThat(index.keyCount()).isEqualTo(1);
        assertThat(query(1)).containsExactly(new PrefixMatch("10.0.0.2:1", 1));
    }
}
