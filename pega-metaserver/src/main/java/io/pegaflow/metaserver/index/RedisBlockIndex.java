package io.pegaflow.metaserver.index;

import com.google.protobuf.ByteString;
import io.lettuce.core.Range;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScoredValue;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.pegaflow.metaserver.node.NodeSession;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The block-owner index in Redis or a Redis Cluster, shared by every metaserver instance that points at it and kept
 * across their restarts, so a failover costs servers neither their cross-node hits nor a re-announcement.
 *
 * <p><b>Layout.</b> One Redis hash per block, key {@code 'b' ‖ ns8 ‖ hash} (ns8: the first 8 bytes of the
 * namespace's SHA-256, so a 1 KiB namespace does not repeat in every key), one field per owner address whose value
 * is the writer's node_id and session token ({@link RedisScripts}). Per node session a sorted set
 * {@code pega:s:<address>|<node_id>} of the keys it owns, scored by announcement time (milliseconds × 1000 plus a
 * per-session sequence, so announcements keep their order within a millisecond): it gives the share its FIFO
 * ({@code ZPOPMIN}), the TTL sweep its range ({@code ZRANGEBYSCORE}) and UnregisterNode its records without a scan.
 * The set {@code pega:sessions} lists those sessions for the sweep; {@code pega:epoch} holds the index epoch. Every
 * block key also expires a TTL after its last announcement, the backstop for records whose session set was lost.
 *
 * <p><b>Semantics.</b> Those of {@link BlockOwnerIndex}, checked by the same tests: owner-matched removes, one record
 * per address (a later session's insert replaces an earlier one's), a per-session share past which the session's own
 * oldest records go, prefix queries that stop at the first hash without a visible owner. Visibility comes from the
 * {@link SessionDirectory} (the node registry over the database): a record is visible while the address's current
 * session has the record's node_id and is fresh. The global bound is Redis's own {@code maxmemory} policy, not
 * {@code max-blocks}.
 *
 * <p>Thread-safe. Every Redis call has the connection's timeout; a failure propagates (the RPC ends INTERNAL).
 */
public final class RedisBlockIndex implements BlockIndex {

    private static final Logger log = LoggerFactory.getLogger(RedisBlockIndex.class);

    static final byte[] EPOCH_KEY = bytes("pega:epoch");
    static final byte[] SESSIONS_KEY = bytes("pega:sessions");
    private static final String SESSION_PREFIX = "pega:s:";
    private static final int NAMESPACE_DIGEST_BYTES = 8;
    private static final int FIRST_QUERY_CHUNK = 64;
    private static final int MAX_QUERY_CHUNK = 4096;
    private static final int SCAN_PAGE = 8192;

    private final RedisConnection connection;
    private final RedisClusterAsyncCommands<byte[], byte[]> redis;
    private final SessionDirectory directory;
    private final long maxBlocksPerNode;
    private final long staleAfterMs;
    private final long ttlMs;
    private final long timeoutMs;
    private final String insertSha;
    private final String removeSha;
    private final Map<String, byte[]> namespaceDigests = new ConcurrentHashMap<>();
    // sessions this instance already added to pega:sessions, and each one's last announcement score
    private final Map<String, AtomicLong> sessionScores = new ConcurrentHashMap<>();
    private final LongAdder shareEvictedRecords = new LongAdder();
    private volatile long epoch;

    /**
     * @param initialEpoch the epoch to publish when Redis holds none yet (this start's database epoch)
     * @param timeout deadline of one round of Redis calls
     */
    public RedisBlockIndex(
            RedisConnection connection,
            SessionDirectory directory,
            long maxBlocksPerNode,
            long staleAfterMs,
            long ttlMs,
            long initialEpoch,
            Duration timeout) {
        if (maxBlocksPerNode <= 0) {
            throw new IllegalArgumentException("max blocks per node: " + maxBlocksPerNode + " (expected: > 0)");
        }
        this.connection = connection;
        this.redis = connection.commands();
        this.directory = directory;
        this.maxBlocksPerNode = maxBlocksPerNode;
        this.staleAfterMs = staleAfterMs;
        this.ttlMs = ttlMs;
        this.timeoutMs = timeout.toMillis();
        this.insertSha = await(redis.scriptLoad(RedisScripts.INSERT));
        this.removeSha = await(redis.scriptLoad(RedisScripts.REMOVE));
        this.epoch = publishEpoch(initialEpoch);
        log.info("Block index in Redis ({}), index epoch {}", connection.description(), epoch);
    }

    // ---- writes

    @Override
    public int insert(String namespace, List<ByteString> hashes, NodeSession session, long nowMs) {
        byte[] record = record(session.id(), session.registeredAtMs());
        byte[] url = bytes(session.url());
        byte[] sessionKey = sessionKey(session.url(), session.id());
        byte[] ttl = bytes(Long.toString(ttlMs));
        byte[] digest = digest(namespace);
        listSession(session.url(), session.id());
        List<Pending<List<Object>>> writes = new ArrayList<>(hashes.size());
        Object[] scored = new Object[hashes.size() * 2];
        long score = nextScores(session.url(), session.id(), nowMs, hashes.size());
        for (int i = 0; i < hashes.size(); i++) {
            byte[] key = blockKey(digest, hashes.get(i));
            writes.add(script(RedisScripts.INSERT, insertSha, ScriptOutputType.MULTI, key, url, record, ttl));
            scored[2 * i] = (double) (score + i);
            scored[2 * i + 1] = key;
        }
        RedisFuture<Long> added = redis.zadd(sessionKey, scored);
        List<byte[]> refused = new ArrayList<>();
        List<byte[]> replacedSessions = new ArrayList<>();
        List<byte[]> replacedKeys = new ArrayList<>();
        for (int i = 0; i < writes.size(); i++) {
            List<Object> outcome = writes.get(i).get();
            long code = (Long) outcome.get(0);
            if (code < 0) {
                refused.add((byte[]) scored[2 * i + 1]);
            } else if (code == 2) {
                byte[] old = (byte[]) outcome.get(1);
                replacedSessions.add(sessionKey(session.url(), idOf(old)));
                replacedKeys.add((byte[]) scored[2 * i + 1]);
            }
        }
        await(added);
        List<RedisFuture<Long>> cleanup = new ArrayList<>();
        if (!refused.isEmpty()) {
            cleanup.add(redis.zrem(sessionKey, refused.toArray(new byte[0][])));
        }
        for (int i = 0; i < replacedKeys.size(); i++) {
            // the older session's set no longer owns this key: its count and its FIFO must not include it
            cleanup.add(redis.zrem(replacedSessions.get(i), replacedKeys.get(i)));
        }
        cleanup.forEach(this::await);
        keepShare(session.url(), session.id(), sessionKey);
        return hashes.size();
    }

    /** Pops the session's oldest keys past its share and removes its records there (its own only). */
    private void keepShare(String url, UUID id, byte[] sessionKey) {
        long owned = await(redis.zcard(sessionKey));
        if (owned <= maxBlocksPerNode) {
            return;
        }
        List<ScoredValue<byte[]>> oldest = await(redis.zpopmin(sessionKey, owned - maxBlocksPerNode));
        List<byte[]> keys = new ArrayList<>(oldest.size());
        for (ScoredValue<byte[]> entry : oldest) {
            keys.add(entry.getValue());
        }
        shareEvictedRecords.add(removeRecords(keys, url, id)[0]);
    }

    @Override
    public int remove(String namespace, List<ByteString> hashes, String url, UUID id) {
        byte[] digest = digest(namespace);
        List<byte[]> keys = new ArrayList<>(hashes.size());
        for (ByteString hash : hashes) {
            keys.add(blockKey(digest, hash));
        }
        long removed = removeRecords(keys, url, id)[0];
        await(redis.zrem(sessionKey(url, id), keys.toArray(new byte[0][])));
        return Math.toIntExact(removed);
    }

    /** Removes {@code url}'s record under {@code id} at each key; returns {records removed, keys left empty}. */
    private long[] removeRecords(List<byte[]> keys, String url, UUID id) {
        byte[] urlBytes = bytes(url);
        byte[] idBytes = idBytes(id);
        List<Pending<Long>> removals = new ArrayList<>(keys.size());
        for (byte[] key : keys) {
            removals.add(script(RedisScripts.REMOVE, removeSha, ScriptOutputType.INTEGER, key, urlBytes, idBytes));
        }
        long[] counts = new long[2];
        for (Pending<Long> removal : removals) {
            long code = removal.get();
            if (code > 0) {
                counts[0]++;
            }
            if (code == 2) {
                counts[1]++;
            }
        }
        return counts;
    }

    @Override
    public long removeOwners(String url, UUID id) {
        return drainSession(url, id)[0];
    }

    /** Removes every record of the session, then its set and its listing; returns {records, keys left empty}. */
    private long[] drainSession(String url, UUID id) {
        byte[] sessionKey = sessionKey(url, id);
        long[] total = new long[2];
        while (true) {
            List<byte[]> keys = await(redis.zrange(sessionKey, 0, SCAN_PAGE - 1));
            if (keys.isEmpty()) {
                break;
            }
            long[] counts = removeRecords(keys, url, id);
            total[0] += counts[0];
            total[1] += counts[1];
            await(redis.zrem(sessionKey, keys.toArray(new byte[0][])));
        }
        await(redis.srem(SESSIONS_KEY, bytes(sessionName(url, id))));
        sessionScores.remove(sessionName(url, id));
        return total;
    }

    // ---- reads

    @Override
    public List<PrefixMatch> queryPrefix(String namespace, List<ByteString> hashes, long nowMs) {
        byte[] digest = digest(namespace);
        // Same walk as the memory index: only owners visible at hash 0 can have a prefix; stop when none advances.
        List<NodeSession> nodes = new ArrayList<>();
        List<byte[]> nodeUrls = new ArrayList<>();
        int[] counts = new int[0];
        int chunk = FIRST_QUERY_CHUNK;
        int next = 0;
        walk:
        while (next < hashes.size()) {
            int end = Math.min(hashes.size(), next + chunk);
            List<RedisFuture<Map<byte[], byte[]>>> reads = new ArrayList<>(end - next);
            for (int i = next; i < end; i++) {
                reads.add(redis.hgetall(blockKey(digest, hashes.get(i))));
            }
            for (int i = next; i < end; i++) {
                Map<byte[], byte[]> owners = await(reads.get(i - next));
                boolean anyAdvanced = false;
                if (i == 0) {
                    for (Map.Entry<byte[], byte[]> owner : owners.entrySet()) {
                        NodeSession session = directory.current(string(owner.getKey()));
                        if (session != null
                                && session.id().equals(idOf(owner.getValue()))
                                && session.isVisible(nowMs, staleAfterMs)) {
                            nodes.add(session);
                            nodeUrls.add(owner.getKey());
                        }
                    }
                    counts = new int[nodes.size()];
                    Arrays.fill(counts, 1);
                    anyAdvanced = !nodes.isEmpty();
                } else {
                    for (Map.Entry<byte[], byte[]> owner : owners.entrySet()) {
                        int j = indexOf(nodeUrls, owner.getKey());
                        if (j >= 0 && counts[j] == i && nodes.get(j).id().equals(idOf(owner.getValue()))) {
                            counts[j] = i + 1;
                            anyAdvanced = true;
                        }
                    }
                }
                if (!anyAdvanced) {
                    break walk;
                }
            }
            next = end;
            chunk = Math.min(chunk * 4, MAX_QUERY_CHUNK);
        }
        List<PrefixMatch> result = new ArrayList<>(nodes.size());
        for (int j = 0; j < nodes.size(); j++) {
            result.add(new PrefixMatch(nodes.get(j).url(), counts[j]));
        }
        return result;
    }

    private static int indexOf(List<byte[]> urls, byte[] url) {
        for (int j = 0; j < urls.size(); j++) {
            if (Arrays.equals(urls.get(j), url)) {
                return j;
            }
        }
        return -1;
    }

    // ---- sweep and epoch

    @Override
    public SweepStats sweep(long nowMs) {
        // Listing first, sessions second: a session listed here was registered (committed) before its listing, so
        // the refreshed directory knows it unless it really ended.
        Set<byte[]> listed = await(redis.smembers(SESSIONS_KEY));
        directory.refresh();
        long[] removed = new long[2];
        Range<Long> expiredScores =
                Range.from(Range.Boundary.unbounded(), Range.Boundary.excluding(Math.max(0, nowMs - ttlMs) * 1000L));
        for (byte[] name : listed) {
            String value = string(name);
            int bar = value.lastIndexOf('|');
            String url = value.substring(0, bar);
            UUID id = UUID.fromString(value.substring(bar + 1));
            NodeSession current = directory.current(url);
            long[] counts;
            if (current == null
                    || !current.id().equals(id)
                    || current.ended()
                    || nowMs - current.lastSeenMs() > ttlMs) {
                counts = drainSession(url, id);
            } else {
                byte[] sessionKey = sessionKey(url, id);
                List<byte[]> expired = await(redis.zrangebyscore(sessionKey, expiredScores));
                counts = removeRecords(expired, url, id);
                if (!expired.isEmpty()) {
                    await(redis.zrem(sessionKey, expired.toArray(new byte[0][])));
                }
            }
            removed[0] += counts[0];
            removed[1] += counts[1];
        }
        return new SweepStats(removed[0], removed[1], 0);
    }

    /** Checks that the epoch key survived; if Redis lost it (and so the index), publishes a new epoch. */
    @Override
    public void refresh() {
        byte[] stored = await(redis.get(EPOCH_KEY));
        if (stored == null) {
            long previous = epoch;
            epoch = publishEpoch(previous + 1); // SET NX: every instance ends up on the same value
            sessionScores.clear(); // the session listing went with it
            log.warn("Redis lost the block index (epoch {} gone); new index epoch {}", previous, epoch);
        } else {
            epoch = Long.parseLong(string(stored));
        }
    }

    private long publishEpoch(long candidate) {
        await(redis.set(EPOCH_KEY, bytes(Long.toString(candidate)), SetArgs.Builder.nx()));
        byte[] stored = await(redis.get(EPOCH_KEY));
        return stored == null ? candidate : Long.parseLong(string(stored));
    }

    @Override
    public long epoch() {
        return epoch;
    }

    // ---- sizes

    @Override
    public long keyCount() {
        List<byte[]> bookkeeping = new ArrayList<>();
        bookkeeping.add(EPOCH_KEY);
        bookkeeping.add(SESSIONS_KEY);
        for (byte[] name : await(redis.smembers(SESSIONS_KEY))) {
            bookkeeping.add(bytes(SESSION_PREFIX + string(name)));
        }
        long total = await(redis.dbsize());
        return Math.max(0, total - await(redis.exists(bookkeeping.toArray(new byte[0][]))));
    }

    @Override
    public long ownerCount() {
        List<RedisFuture<Long>> cards = new ArrayList<>();
        for (byte[] name : await(redis.smembers(SESSIONS_KEY))) {
            cards.add(redis.zcard(bytes(SESSION_PREFIX + string(name))));
        }
        long total = 0;
        for (RedisFuture<Long> card : cards) {
            total += await(card);
        }
        return total;
    }

    @Override
    public long ownedBlocks(NodeSession session) {
        return await(redis.zcard(sessionKey(session.url(), session.id())));
    }

    @Override
    public long evictedKeys() {
        return 0; // Redis evicts under its own maxmemory policy and counts it in INFO (evicted_keys)
    }

    @Override
    public long shareEvictedRecords() {
        return shareEvictedRecords.sum();
    }

    @Override
    public String backend() {
        return "redis";
    }

    @Override
    public void close() {
        connection.close();
    }

    // ---- encoding

    private void listSession(String url, UUID id) {
        String name = sessionName(url, id);
        if (!sessionScores.containsKey(name)) {
            await(redis.sadd(SESSIONS_KEY, bytes(name)));
            sessionScores.putIfAbsent(name, new AtomicLong(Long.MIN_VALUE));
        }
    }

    /** The first of {@code count} consecutive scores for the session's next announcement. */
    private long nextScores(String url, UUID id, long nowMs, int count) {
        AtomicLong last = sessionScores.computeIfAbsent(sessionName(url, id), n -> new AtomicLong(Long.MIN_VALUE));
        long floor = nowMs * 1000L;
        return last.accumulateAndGet(count, (previous, n) -> Math.max(floor, previous + 1) + n - 1) - count + 1;
    }

    private static String sessionName(String url, UUID id) {
        return url + "|" + id;
    }

    private static byte[] sessionKey(String url, UUID id) {
        return bytes(SESSION_PREFIX + sessionName(url, id));
    }

    private byte[] digest(String namespace) {
        byte[] cached = namespaceDigests.get(namespace);
        if (cached != null) {
            return cached;
        }
        try {
            byte[] digest = Arrays.copyOf(
                    MessageDigest.getInstance("SHA-256").digest(bytes(namespace)), NAMESPACE_DIGEST_BYTES);
            if (namespaceDigests.size() < 4096) { // a client can name any number of namespaces
                namespaceDigests.put(namespace, digest);
            }
            return digest;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java runtime", e);
        }
    }

    static byte[] blockKey(byte[] namespaceDigest, ByteString hash) {
        byte[] key = new byte[1 + namespaceDigest.length + hash.size()];
        key[0] = 'b';
        System.arraycopy(namespaceDigest, 0, key, 1, namespaceDigest.length);
        hash.copyTo(key, 1 + namespaceDigest.length);
        return key;
    }

    private static byte[] record(UUID id, long sessionRegisteredAtMs) {
        byte[] token = bytes(Long.toString(sessionRegisteredAtMs));
        return ByteBuffer.allocate(16 + token.length)
                .putLong(id.getMostSignificantBits())
                .putLong(id.getLeastSignificantBits())
                .put(token)
                .array();
    }

    private static byte[] idBytes(UUID id) {
        return ByteBuffer.allocate(16)
                .putLong(id.getMostSignificantBits())
                .putLong(id.getLeastSignificantBits())
                .array();
    }

    private static UUID idOf(byte[] record) {
        ByteBuffer buffer = ByteBuffer.wrap(record, 0, 16);
        return new UUID(buffer.getLong(), buffer.getLong());
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    private static String string(byte[] value) {
        return new String(value, StandardCharsets.UTF_8);
    }

    // ---- calls

    /** A script call that falls back to EVAL when the server lost its script cache (a restart, a promoted replica). */
    private <T> Pending<T> script(String source, String sha, ScriptOutputType type, byte[] key, byte[]... args) {
        byte[][] keys = {key};
        return new Pending<>(redis.evalsha(sha, type, keys, args), () -> redis.eval(source, type, keys, args));
    }

    private final class Pending<T> {
        private final RedisFuture<T> first;
        private final Supplier<RedisFuture<T>> fallback;

        Pending(RedisFuture<T> first, Supplier<RedisFuture<T>> fallback) {
            this.first = first;
            this.fallback = fallback;
        }

        T get() {
            try {
                return awaitOrThrow(first);
            } catch (RedisNoScriptException e) {
                return await(fallback.get());
            }
        }
    }

    private <T> T await(RedisFuture<T> future) {
        return awaitOrThrow(future);
    }

    private <T> T awaitOrThrow(RedisFuture<T> future) {
        try {
            return future.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for Redis", e);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new IllegalStateException("Redis did not answer within " + timeoutMs + " ms", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException("Redis call failed", e.getCause());
        }
    }
}
