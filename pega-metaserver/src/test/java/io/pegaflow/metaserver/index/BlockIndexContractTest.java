package io.pegaflow.metaserver.index;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.metaserver.node.NodeSession;
import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.RedisServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The block-owner index on its own, one contract for both backends of {@code pega.metaserver.index}: insert,
 * owner-match remove, the prefix algorithm, visibility, shares, sweep. {@code REDIS} runs against a real
 * {@code redis-server} started here (skipped with a message when it is not installed), with a map as the session
 * directory that the registry is in the application.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BlockIndexContractTest {

    static final long STALE_MS = 30_000;
    static final long TTL_MS = 120 * 60_000L;
    static final String NS = "model-a";

    enum Backend {
        MEMORY,
        REDIS
    }

    private static @Nullable RedisServer redis;
    private static @Nullable Path redisDir;

    final AdjustableClock clock = new AdjustableClock();
    final Map<String, NodeSession> directory = new ConcurrentHashMap<>();
    final List<BlockIndex> opened = new ArrayList<>();
    BlockIndex index;

    /** A fresh index of {@code backend} (Redis flushed first); {@code maxBlocksPerNode} MAX_VALUE means no share. */
    BlockIndex open(Backend backend, long maxBlocks, long maxBlocksPerNode) throws IOException {
        BlockIndex created;
        if (backend == Backend.MEMORY) {
            created = new BlockOwnerIndex(maxBlocks, maxBlocksPerNode, STALE_MS, TTL_MS);
        } else {
            RedisServer server = redis();
            assertThat(server.command("FLUSHALL")).isEqualTo("+OK");
            created = new RedisBlockIndex(
                    RedisConnection.open(server.uri(), List.of(), Duration.ofSeconds(5)),
                    directory::get,
                    maxBlocksPerNode,
                    STALE_MS,
                    TTL_MS,
                    1,
                    Duration.ofSeconds(5));
        }
        opened.add(created);
        return created;
    }

    void use(Backend backend) throws IOException {
        index = open(backend, 1_000_000, Long.MAX_VALUE);
    }

    private static synchronized RedisServer redis() throws IOException {
        if (redis == null) {
            redisDir = Files.createTempDirectory("pega-redis-contract");
            redis = RedisServer.start(redisDir);
        }
        return redis;
    }

    @AfterEach
    void closeIndexes() {
        opened.forEach(BlockIndex::close);
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
            redis = null;
        }
    }

    /** A new session of {@code url}, now the address's current one. */
    NodeSession node(String url) {
        return current(NodeSession.detached(url, UUID.randomUUID(), clock.millis()));
    }

    NodeSession current(NodeSession session) {
        directory.put(session.url(), session);
        return session;
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

    @ParameterizedTest
    @EnumSource(Backend.class)
    void shouldReturnEachNodesContiguousPrefix(Backend backend) throws Exception {
        use(backend);
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

    @ParameterizedTest
    @EnumSource(Backend.class)
    void shouldFreezeANodeThatMissedAnEarlierHash(Backend backend) throws Exception {
        use(backend);
        NodeSession a = node("10.0.0.1:1");
        NodeSession b = node("10.0.0.2:1");
        index.insert(NS, hashes(1, 2, 3, 4), a, clock.millis());
        index.insert(NS, hashes(1, 3, 4), b, clock.millis());
        NodeSession c = node("10.0.0.3:1");
        index.insert(NS, hashes(2, 3, 4), c, clock.millis()); // never held hash 1: prefix 0, not reported

        assertThat(query(1, 2, 3, 4))
                .containsExactly(new PrefixMatch("10.0.0.1:1", 4), new PrefixMatch("10.0.0.2:1", 1));
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void shouldReturnNothingWhenTheFirstHashHasNoVisibleOwner(Backend backend) throws Exception {
        use(backend);
        NodeSession a = node("10.0.0.1:1");
        index.insert(NS, hashes(2, 3), a, clock.millis());
        assertThat(query(1, 2, 3)).isEmpty();
        assertThat(index.queryPrefix("other-model", hashes(2, 3), clock.millis()))
                .isEmpty();
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void shouldHideStaleAndEndedSessionsAndShowRevivedOnes(Backend backend) throws Exception {
        use(backend);
        NodeSession a = node("10.0.0.1:1");
        NodeSession b = node("10.0.0.2:1");
        index.insert(NS, hashes(1, 2), a, clock.millis());
        index.insert(NS, hashes(1, 2), b, clock.millis());
        clock.advance(Duration.ofMillis(STALE_MS + 1));

        assertThat(query(1, 2)).isEmpty(); // both stale: the global prefix stops at hash 1
        NodeSession revived = current(NodeSession.detached("10.0.0.2:1", b.id(), clock.millis()));
        index.insert(NS, hashes(1, 2), revived, clock.millis());
        assertThat(query(1, 2)).containsExactly(new PrefixMatch("10.0.0.2:1", 2));
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void shouldReplaceTheRecordOfTheSameAddressAndCountEveryHash(Backend backend) throws Exception {
        use(backend);
        NodeSession old = node("10.0.0.1:1");
        index.insert(NS, hashes(1, 2), old, clock.millis());
        NodeSession fresh = node("10.0.0.1:1");

        assertThat(index.insert(NS, hashes(1, 1, 2), fresh, clock.millis())).isEqualTo(3);
        assertThat(index.ownerCount()).isEqualTo(2);
        assertThat(index.ownedBlocks(old)).isZero();
        assertThat(index.ownedBlocks(fresh)).isEqualTo(2);
        assertThat(query(1, 2)).containsExactly(new PrefixMatch("10.0.0.1:1", 2));
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void shouldRemoveOnlyRecordsOwnedByTheRequestingSession(Backend backend) throws Exception {
        use(backend);
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

    @ParameterizedTest
    @EnumSource(Backend.class)
    void shouldKeepTheInsertWhenARemoveByAnotherNodeRaces(Backend backend) throws Exception {
        use(backend);
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

    @ParameterizedTest
    @EnumSource(Backend.class)
    void shouldStayWithinItsBound(Backend backend) throws Exception {
        use(backend);
        // the memory backend's own bound; Redis bounds itself with maxmemory
        Assumptions.assumeTrue(backend == Backend.MEMORY, "max-blocks bounds the memory backend only");
        BlockIndex small = open(backend, 100, Long.MAX_VALUE);
        NodeSession a = node("10.0.0.1:1");
        for (int i = 0; i < 1_000; i += 10) {
            small.insert(NS, hashes(i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7, i + 8, i + 9), a, 0);
        }
        small.cleanUp();

        assertThat(small.keyCount()).isLessThanOrEqualTo(100);
        assertThat(small.evictedKeys()).isEqualTo(1_000 - small.keyCount());
        assertThat(small.ownerCount()).isEqualTo(small.keyCount());
        assertThat(small.ownedBlocks(a)).isEqualTo(small.keyCount());
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void shouldDropANodesOwnOldestRecordsPastItsShareAndKeepTheOthers(Backend backend) throws Exception {
        use(backend);
        BlockIndex shared = open(backend, 100, 25);
        NodeSession a = node("10.0.0.1:1");
        NodeSession b = node("10.0.0.2:1");
        shared.insert(NS, hashes(0, 1, 2, 3, 4), b, 0);
        for (int i = 1_000; i < 2_000; i += 5) {
            shared.insert(NS, hashes(i, i + 1, i + 2, i + 3, i + 4), a, 0);
        }
        shared.cleanUp();

        assertThat(shared.ownedBlocks(a)).isEqualTo(25);
        assertThat(shared.ownedBlocks(b)).isEqualTo(5);
        assertThat(shared.evictedKeys()).as("nothing evicted by the size bound").isZero();
        assertThat(shared.shareEvictedRecords()).isEqualTo(1_000 - 25);
        assertThat(shared.queryPrefix(NS, hashes(0, 1, 2, 3, 4), clock.millis()))
                .hasSize(1);
        assertThat(shared.queryPrefix(NS, hashes(1_975), clock.millis())).hasSize(1);
        assertThat(shared.queryPrefix(NS, hashes(1_974), clock.millis())).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void shouldSweepExpiredAndOrphanedRecords(Backend backend) throws Exception {
        use(backend);
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
        assertThat(index.ownedBlocks(a)).isZero();
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void shouldRemoveAllRecordsOfOneSessionOnUnregister(Backend backend) throws Exception {
        use(backend);
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

    /**
     * UnregisterNode walks the session's own announcements on the memory backend: re-announced, removed and
     * share-evicted hashes must not be counted twice or missed, and other nodes' records on the same keys stay.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void shouldRemoveExactlyTheUnregisteringSessionsRecords(Backend backend) throws Exception {
        use(backend);
        BlockIndex shared = open(backend, 100_000, 3_000);
        NodeSession a = node("10.0.0.1:1");
        NodeSession b = node("10.0.0.2:1");
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < 4_000; i++) {
            all.add(i);
        }
        for (int from = 0; from < 4_000; from += 100) {
            shared.insert(NS, hashes(all.subList(from, from + 100)), a, clock.millis());
        }
        shared.insert(NS, hashes(all.subList(3_000, 3_500)), a, clock.millis()); // re-announced
        shared.insert(NS, hashes(all.subList(2_000, 3_200)), b, clock.millis());
        assertThat(shared.remove(NS, hashes(all.subList(3_900, 4_000)), a.url(), a.id()))
                .isEqualTo(100);
        long ownedByA = shared.ownedBlocks(a);
        long ownedByB = shared.ownedBlocks(b);
        assertThat(ownedByA).isEqualTo(2_900);

        assertThat(shared.removeOwners(a.url(), a.id())).isEqualTo(ownedByA);
        assertThat(shared.removeOwners(a.url(), a.id())).isZero();
        assertThat(shared.ownedBlocks(a)).isZero();
        assertThat(shared.ownedBlocks(b)).isEqualTo(ownedByB).isEqualTo(1_200);
        assertThat(shared.ownerCount()).isEqualTo(ownedByB);
        assertThat(shared.queryPrefix(NS, hashes(all.subList(2_000, 3_200)), clock.millis()))
                .containsExactly(new PrefixMatch(b.url(), 1_200));
        assertThat(shared.queryPrefix(NS, hashes(all.subList(3_200, 3_300)), clock.millis()))
                .isEmpty();
    }

    static List<ByteString> hashes(List<Integer> ids) {
        List<ByteString> out = new ArrayList<>(ids.size());
        for (int id : ids) {
            out.add(h(id));
        }
        return out;
    }
}
