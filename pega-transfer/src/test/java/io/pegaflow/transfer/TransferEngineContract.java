package io.pegaflow.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.kernel.memory.MemoryRegionInfo;
import io.pegaflow.transfer.TransferException.Kind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The behaviour every {@link TransferEngine} must have, run against each implementation by a subclass: byte-exact gets
 * and puts, spreading over all lanes, validation before anything is issued, handshake agreement, failure isolation per
 * peer, deadlines, and a close that leaves nothing in flight.
 *
 * <p>Nodes are real pinned pools of a few MiB, each with its own engine, in this JVM.
 */
public abstract class TransferEngineContract {
    protected static final long MIB = 1024 * 1024;
    protected static final long KIB = 1024;
    static final long WAIT_SECONDS = 20;
    static final long CONNECT_NANOS = 10_000_000_000L;

    protected final ManualClock clock = new ManualClock();
    private final List<AutoCloseable> toClose = new ArrayList<>();

    /** An engine over the regions with {@code lanes} connections per peer. */
    protected abstract TransferEngine open(int lanes, List<MemoryRegionInfo> regions);

    /**
     * A bare peer over the regions that answers until {@link Stoppable#stop()} and then completes nothing, as a process
     * stopped with SIGSTOP; null when the fabric completes operations without the peer's help.
     */
    protected abstract Stoppable stoppablePeer(int lanes, List<MemoryRegionInfo> regions);

    /** Whether the fabric notices that a peer's engine closed (shared memory without peer error handling does not). */
    protected boolean detectsPeerClose() {
        return true;
    }

    /** See {@link #stoppablePeer}. */
    public interface Stoppable extends AutoCloseable {
        HandshakeDescriptor descriptor();

        void stop();

        @Override
        void close();
    }

    /** One node: a pool and an engine over it. Closed engine first, then pool, after each test. */
    protected final class Node {
        final PinnedMemoryPool pool;
        final TransferEngine engine;
        final PeerId id;

        Node(String name, int lanes, long poolBytes) {
            pool = newPool(lanes, poolBytes);
            toClose.add(0, pool);
            engine = open(lanes, pool.regions());
            toClose.add(0, engine);
            id = new PeerId(name);
        }

        PinnedAllocation allocate(long bytes) {
            PinnedAllocation a = pool.allocate(bytes);
            assertThat(a).as("pool allocation of %d bytes", bytes).isNotNull();
            toClose.add(0, a::release);
            return a;
        }
    }

    /** A node's pool, made just before its engine; what must close after the pool goes to {@link #closeLater}. */
    protected PinnedMemoryPool newPool(int lanes, long poolBytes) {
        return PinnedMemoryPool.create(PoolConfig.of(poolBytes));
    }

    /** Closes {@code c} after the test, after everything registered later and before everything registered earlier. */
    protected final void closeLater(AutoCloseable c) {
        toClose.add(0, c);
    }

    protected Node node(String name, int lanes) {
        return new Node(name, lanes, 16 * MIB);
    }

    /** Connects both ways, as the RdmaHandshake exchange does. */
    protected static void pair(Node a, Node b) throws Exception {
        a.engine.connect(b.id, b.engine.localDescriptor(), CONNECT_NANOS).get(WAIT_SECONDS, TimeUnit.SECONDS);
        b.engine.connect(a.id, a.engine.localDescriptor(), CONNECT_NANOS).get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    protected static TransferResult await(CompletableFuture<TransferResult> f) throws Exception {
        return f.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    /**
     * Moves the clock past a deadline, then on by a millisecond every few milliseconds until {@code f} is done
     * ({@value #WAIT_SECONDS} s at most), as real time would. A lane scans deadlines at most once per clock
     * millisecond: a single jump could be scanned just before the lane took the work it should expire (the submit or
     * the connect is still in its queue), and a clock that then stands still would never be scanned again.
     */
    protected void advancePast(Duration jump, CompletableFuture<?> f) {
        clock.advance(jump);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!f.isDone() && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            clock.advance(Duration.ofMillis(1));
        }
    }

    /** A batch of {@code ops} ranges of {@code opBytes}, op k at offset {@code k * opBytes} on both sides. */
    protected static TransferBatch batch(Direction d, long local, long remote, int ops, long opBytes) {
        TransferBatch b = d == Direction.GET ? TransferBatch.get(ops) : TransferBatch.put(ops);
        for (int k = 0; k < ops; k++) {
            b.add(local + k * opBytes, remote + k * opBytes, opBytes);
        }
        return b;
    }

    protected static PeerView peer(TransferEngine engine, PeerId id) {
        return engine.view().peers().stream()
                .filter(p -> p.peer().equals(id))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no view of " + id));
    }

    @AfterEach
    void closeEverything() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
        toClose.clear();
    }

    @ParameterizedTest(name = "lanes={0}")
    @ValueSource(ints = {1, 2, 4})
    void shouldGetManySmallOperationsByteExactOverEveryLane(int lanes) throws Exception {
        Node a = node("a:1", lanes);
        Node b = node("b:1", lanes);
        pair(a, b);
        int ops = 64;
        long opBytes = 64 * KIB;
        PinnedAllocation src = b.allocate(ops * opBytes);
        PinnedAllocation dst = a.allocate(ops * opBytes);
        TestMemory.fill(src.address(), src.sizeBytes(), 7);
        TestMemory.zero(dst.address(), dst.sizeBytes());

        TransferResult r = await(a.engine.submit(
                b.id,
                batch(Direction.GET, dst.address(), src.address(), ops, opBytes),
                Duration.ofSeconds(30).toNanos()));

        assertThat(r.isComplete()).as(r.toString()).isTrue();
        assertThat(r.bytesTransferred()).isEqualTo(ops * opBytes);
        assertThat(TestMemory.firstMismatch(dst.address(), ops * opBytes, 7)).isEqualTo(-1);
        PeerView view = peer(a.engine, b.id);
        assertThat(view.lanes()).hasSize(lanes).allSatisfy(lane -> {
            assertThat(lane.opsIssued()).isEqualTo(ops / lanes);
            assertThat(lane.state()).isEqualTo("OPEN");
            assertThat(lane.inFlightOps()).isZero();
        });
        assertThat(view.bytesRead()).isEqualTo(ops * opBytes);
        assertThat(view.opsCompleted()).isEqualTo(ops);
        assertThat(view.inFlightOps()).isZero();
    }

    @ParameterizedTest(name = "lanes={0}")
    @ValueSource(ints = {1, 2, 4})
    void shouldPutLargeOperationsByteExact(int lanes) throws Exception {
        Node a = node("a:1", lanes);
        Node b = node("b:1", lanes);
        pair(a, b);
        int ops = 2;
        long opBytes = 4 * MIB;
        PinnedAllocation src = a.allocate(ops * opBytes);
        PinnedAllocation dst = b.allocate(ops * opBytes);
        TestMemory.fill(src.address(), src.sizeBytes(), 11);
        TestMemory.zero(dst.address(), dst.sizeBytes());

        TransferResult r = await(a.engine.submit(
                b.id,
                batch(Direction.PUT, src.address(), dst.address(), ops, opBytes),
                Duration.ofSeconds(30).toNanos()));

        assertThat(r.isComplete()).as(r.toString()).isTrue();
        assertThat(TestMemory.firstMismatch(dst.address(), ops * opBytes, 11)).isEqualTo(-1);
        assertThat(peer(a.engine, b.id).bytesWritten()).isEqualTo(ops * opBytes);
    }

    @Test
    void shouldStartSuccessiveSmallBatchesOnSuccessiveLanes() throws Exception {
        int lanes = 4;
        Node a = node("a:1", lanes);
        Node b = node("b:1", lanes);
        pair(a, b);
        PinnedAllocation src = b.allocate(4 * KIB);
        PinnedAllocation dst = a.allocate(4 * KIB);
        TestMemory.fill(src.address(), 4 * KIB, 3);
        for (int i = 0; i < lanes; i++) {
            long off = i * KIB;
            TransferResult r = await(a.engine.submit(
                    b.id, TransferBatch.get(1).add(dst.address() + off, src.address() + off, KIB), 30_000_000_000L));
            assertThat(r.isComplete()).isTrue();
        }
        assertThat(peer(a.engine, b.id).lanes())
                .extracting(PeerView.LaneView::opsIssued)
                .containsExactly(1L, 1L, 1L, 1L);
        assertThat(TestMemory.firstMismatch(dst.address(), 4 * KIB, 3)).isEqualTo(-1);
    }

    @Test
    void shouldRefuseOperationsOutsideRegisteredMemoryBeforeIssuingAny() throws Exception {
        Node a = node("a:1", 2);
        Node b = node("b:1", 2);
        pair(a, b);
        PinnedAllocation dst = a.allocate(64 * KIB);
        MemoryRegionInfo local = a.pool.regions().get(0);
        MemoryRegionInfo remote = b.pool.regions().get(0);
        long localEnd = local.address() + local.lengthBytes();
        long remoteEnd = remote.address() + remote.lengthBytes();

        assertRefused(
                a,
                TransferBatch.get(2).add(dst.address(), remote.address(), KIB).add(4096, remote.address(), KIB),
                "operation 1: local range");
        assertRefused(a, TransferBatch.get(1).add(dst.address(), remoteEnd - 100, KIB), "operation 0: remote range");
        assertRefused(a, TransferBatch.put(1).add(localEnd - 10, remote.address(), 20), "operation 0: local range");
        assertRefused(
                a, TransferBatch.get(1).add(dst.address(), remote.address() - KIB, KIB), "operation 0: remote range");
        assertThatThrownBy(() -> TransferBatch.get(1).add(dst.address(), remote.address(), 0))
                .isInstanceOf(IllegalArgumentException.class);

        PeerView view = peer(a.engine, b.id);
        assertThat(view.lanes()).allSatisfy(lane -> assertThat(lane.opsIssued()).isZero());
        assertThat(view.batches()).isZero();
        assertThat(view.inFlightOps()).isZero();
    }

    private static void assertRefused(Node a, TransferBatch batch, String message) {
        PeerId b = new PeerId("b:1");
        assertThatThrownBy(() -> a.engine.submit(b, batch, 1_000_000_000L))
                .isInstanceOfSatisfying(
                        TransferException.class, e -> assertThat(e.kind()).isEqualTo(Kind.INVALID_ARGUMENT))
                .hasMessageContaining(message);
    }

    @Test
    void shouldRefuseAPeerItNeverConnectedTo() {
        Node a = node("a:1", 2);
        PinnedAllocation dst = a.allocate(KIB);
        assertThatThrownBy(() -> a.engine.submit(
                        new PeerId("nobody:1"), TransferBatch.get(1).add(dst.address(), 4096, KIB), 1_000_000L))
                .isInstanceOfSatisfying(
                        TransferException.class, e -> assertThat(e.kind()).isEqualTo(Kind.NOT_CONNECTED))
                .hasMessageContaining("nobody:1");
        assertThat(a.engine.isConnected(new PeerId("nobody:1"))).isFalse();
    }

    @Test
    void shouldRefuseAPeerWithAnotherConnectionCountNamingBothValues() {
        Node a = node("a:1", 2);
        Node b = node("b:1", 4);
        assertThatThrownBy(() -> a.engine.connect(b.id, b.engine.localDescriptor(), CONNECT_NANOS))
                .isInstanceOfSatisfying(
                        TransferException.class, e -> assertThat(e.kind()).isEqualTo(Kind.INCOMPATIBLE_PEER))
                .hasMessageContaining("qps_per_peer mismatch: local=2, remote=4");
        assertThatThrownBy(() -> b.engine.connect(a.id, a.engine.localDescriptor(), CONNECT_NANOS))
                .hasMessageContaining("qps_per_peer mismatch: local=4, remote=2");
        assertThat(a.engine.isConnected(b.id)).isFalse();
    }

    @Test
    void shouldRefuseAPeerWithAnotherNicCountNamingBothValues() {
        Node a = node("a:1", 2);
        Node b = node("b:1", 2);
        HandshakeDescriptor d = b.engine.localDescriptor();
        HandshakeDescriptor twoNics =
                new HandshakeDescriptor(d.fabric(), d.instanceId(), d.laneAddresses(), d.nicCount() + 1, d.regions());
        assertThatThrownBy(() -> a.engine.connect(b.id, twoNics, CONNECT_NANOS))
                .isInstanceOfSatisfying(
                        TransferException.class, e -> assertThat(e.kind()).isEqualTo(Kind.INCOMPATIBLE_PEER))
                .hasMessageContaining("NIC count mismatch: local=" + d.nicCount() + ", remote=" + (d.nicCount() + 1));
    }

    @Test
    void shouldSurviveItsOwnDescriptorRoundTrip() {
        Node a = node("a:1", 2);
        HandshakeDescriptor d = a.engine.localDescriptor();
        HandshakeDescriptor back = HandshakeDescriptor.decode(d.encode());
        assertThat(back.encode()).isEqualTo(d.encode());
        assertThat(back.lanes()).isEqualTo(2);
        assertThat(back.regions()).hasSize(a.pool.regions().size());
        assertThat(back.regions().get(0).base())
                .isEqualTo(a.pool.regions().get(0).address());
    }

    @Test
    void shouldFailOnlyTheOperationsOfAPeerThatWentAway() throws Exception {
        assumeThat(detectsPeerClose())
                .as("this fabric has no peer failure detection")
                .isTrue();
        Node a = node("a:1", 2);
        Node b = node("b:1", 2);
        Node c = node("c:1", 2);
        pair(a, b);
        pair(a, c);
        PinnedAllocation fromB = b.allocate(MIB);
        PinnedAllocation fromC = c.allocate(MIB);
        PinnedAllocation intoB = a.allocate(MIB);
        PinnedAllocation intoC = a.allocate(MIB);
        TestMemory.fill(fromB.address(), MIB, 21);
        c.engine.close();

        // the fabric may have noticed already (UCX over TCP sees the connection reset), then submit refuses at once;
        // otherwise the batch's operations fail
        CompletableFuture<TransferResult> toC = null;
        try {
            toC = a.engine.submit(
                    c.id, batch(Direction.GET, intoC.address(), fromC.address(), 16, 64 * KIB), 5_000_000_000L);
        } catch (TransferException e) {
            assertThat(e.kind()).isEqualTo(Kind.NOT_CONNECTED);
            assertThat(e.getMessage()).contains("c:1", "last failure");
        }
        TransferResult fromBResult = await(a.engine.submit(
                b.id, batch(Direction.GET, intoB.address(), fromB.address(), 16, 64 * KIB), 30_000_000_000L));

        assertThat(fromBResult.isComplete()).as(fromBResult.toString()).isTrue();
        assertThat(TestMemory.firstMismatch(intoB.address(), MIB, 21)).isEqualTo(-1);
        if (toC != null) {
            TransferResult fromCResult = awaitFailure(toC);
            assertThat(fromCResult.isComplete()).isFalse();
            assertThat(fromCResult.failedCount()).isEqualTo(16);
            assertThat(fromCResult.failure().kind()).isIn(Kind.PEER_FAILED, Kind.TIMEOUT);
        }
        assertThat(a.engine.isConnected(c.id)).isFalse();
        assertThat(a.engine.isConnected(b.id)).isTrue();
        assertThat(peer(a.engine, c.id).inFlightOps()).isZero();
        assertThat(peer(a.engine, c.id).state()).isEqualTo("DISCONNECTED");
    }

    /**
     * The class of defect behind decision 0018's wrong bytes: a fabric may report operations complete while their peer
     * dies under them (UCX 1.13 completes a pending flush when it purges a failed endpoint's requests, and only then
     * calls the endpoint's error handler). Whatever the timing, an operation reported complete holds every byte.
     */
    @Test
    void shouldNeverReportAnOperationCompleteWhoseBytesDidNotArriveWhenThePeerDiesMidData() throws Exception {
        assumeThat(detectsPeerClose())
                .as("this fabric has no peer failure detection")
                .isTrue();
        int ops = 512;
        long opBytes = 64 * KIB;
        long total = ops * opBytes;
        Node a = new Node("a:1", 2, total + MIB);
        PinnedAllocation dst = a.allocate(total);
        long completed = 0;
        long failed = 0;
        for (int round = 0; round < 4; round++) {
            Node c = new Node("c:" + round, 2, total + MIB);
            pair(a, c);
            PinnedAllocation src = c.allocate(total);
            long seed = 40L + round;
            TestMemory.fill(src.address(), total, seed);
            TestMemory.zero(dst.address(), total);
            CompletableFuture<TransferResult> pending = a.engine.submit(
                    c.id, batch(Direction.GET, dst.address(), src.address(), ops, opBytes), 5_000_000_000L);
            awaitFirstBytes(dst.address() + opBytes - 8, seed, opBytes - 8);
            c.engine.close(); // the peer goes away with the batch in flight

            TransferResult r = awaitFailure(pending);
            for (int k = 0; k < ops; k++) {
                if (r.failed(k)) {
                    failed++;
                    continue;
                }
                completed++;
                assertThat(TestMemory.firstMismatch(dst.address() + k * opBytes, opBytes, seed, k * opBytes))
                        .as("round %d: operation %d was reported complete (%s)", round, k, r)
                        .isEqualTo(-1);
            }
            assertThat(peer(a.engine, c.id).inFlightOps()).isZero();
        }
        System.out.printf("peer closed mid-data: %d operations complete and exact, %d failed%n", completed, failed);
    }

    /** Spins until the 8 pattern bytes at {@code address} (pattern offset {@code offset}) arrived, 10 s at most. */
    private static void awaitFirstBytes(long address, long seed, long offset) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (TestMemory.firstMismatch(address, 8, seed, offset) >= 0 && System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();
        }
    }

    /** Waits for a batch that should fail; if the fabric has not noticed after a while, lets its deadline pass. */
    private TransferResult awaitFailure(CompletableFuture<TransferResult> f) throws Exception {
        try {
            return f.get(5, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            advancePast(Duration.ofSeconds(10), f);
            return await(f);
        }
    }

    @Test
    void shouldDropAStoppedPeerAtTheDeadlineAndKeepTheOthers() throws Exception {
        Node a = node("a:1", 2);
        Node b = node("b:1", 2);
        pair(a, b);
        Stoppable u = stoppablePeer(2, b.pool.regions());
        assumeThat(u)
                .as("this fabric completes operations without the peer's help")
                .isNotNull();
        toClose.add(0, u);
        PeerId uid = new PeerId("u:1");
        a.engine.connect(uid, u.descriptor(), CONNECT_NANOS).get(WAIT_SECONDS, TimeUnit.SECONDS);
        u.stop();
        PinnedAllocation dst = a.allocate(MIB);
        PinnedAllocation src = b.allocate(MIB);
        TestMemory.fill(src.address(), MIB, 5);

        CompletableFuture<TransferResult> stuck =
                a.engine.submit(uid, batch(Direction.GET, dst.address(), src.address(), 8, 64 * KIB), 2_000_000_000L);
        assertThat(stuck).isNotDone();
        assertThat(peer(a.engine, uid).inFlightOps()).isEqualTo(8);
        advancePast(Duration.ofSeconds(3), stuck);
        TransferResult r = await(stuck);

        assertThat(r.isComplete()).isFalse();
        assertThat(r.failure().kind()).isEqualTo(Kind.TIMEOUT);
        assertThat(r.failure().getMessage()).contains("u:1", "not complete after");
        assertThat(r.completedPrefix()).isZero();
        assertThat(a.engine.isConnected(uid)).isFalse();
        assertThat(peer(a.engine, uid).errors()).containsEntry("TIMEOUT", 1L);
        assertThatThrownBy(() -> a.engine.submit(uid, TransferBatch.get(1).add(dst.address(), src.address(), 8), 1L))
                .hasMessageContaining("not connected to u:1")
                .hasMessageContaining("not complete after");
        TransferResult ok = await(a.engine.submit(
                b.id, batch(Direction.GET, dst.address(), src.address(), 8, 64 * KIB), 30_000_000_000L));
        assertThat(ok.isComplete()).isTrue();
        assertThat(TestMemory.firstMismatch(dst.address(), 8 * 64 * KIB, 5)).isEqualTo(-1);
    }

    @Test
    void shouldTimeOutAConnectionToAStoppedPeer() throws Exception {
        Node a = node("a:1", 2);
        Node b = node("b:1", 2);
        Stoppable u = stoppablePeer(2, b.pool.regions());
        assumeThat(u)
                .as("this fabric completes operations without the peer's help")
                .isNotNull();
        toClose.add(0, u);
        u.stop();
        PeerId uid = new PeerId("u:1");

        CompletableFuture<Void> connecting = a.engine.connect(uid, u.descriptor(), 1_000_000_000L);
        assertThat(connecting).isNotDone();
        assertThat(peer(a.engine, uid).state()).isEqualTo("CONNECTING");
        advancePast(Duration.ofSeconds(2), connecting);

        assertThatThrownBy(() -> connecting.get(WAIT_SECONDS, TimeUnit.SECONDS))
                .hasCauseInstanceOf(TransferException.class)
                .hasMessageContaining("did not answer the connection");
        assertThat(a.engine.isConnected(uid)).isFalse();
        assertThat(peer(a.engine, uid).lanes()).isEmpty();
    }

    @Test
    void shouldFailInFlightOperationsWhenClosedAndRefuseEverythingAfter() throws Exception {
        Node a = node("a:1", 2);
        Node b = node("b:1", 2);
        pair(a, b);
        PinnedAllocation dst = a.allocate(MIB);
        PinnedAllocation src = b.allocate(MIB);
        Stoppable u = stoppablePeer(2, b.pool.regions());
        CompletableFuture<TransferResult> stuck = null;
        if (u != null) {
            toClose.add(0, u);
            a.engine.connect(new PeerId("u:1"), u.descriptor(), CONNECT_NANOS).get(WAIT_SECONDS, TimeUnit.SECONDS);
            u.stop();
            stuck = a.engine.submit(
                    new PeerId("u:1"), batch(Direction.GET, dst.address(), src.address(), 4, KIB), Long.MAX_VALUE / 4);
        }

        a.engine.close();
        a.engine.close();

        if (stuck != null) {
            TransferResult r = await(stuck);
            assertThat(r.failure().kind()).isEqualTo(Kind.CLOSED);
        }
        assertThat(a.engine.view().closed()).isTrue();
        assertThat(a.engine.view().inFlightOps()).isZero();
        assertThatThrownBy(() -> a.engine.submit(b.id, TransferBatch.get(1).add(dst.address(), src.address(), 8), 1L))
                .isInstanceOfSatisfying(
                        TransferException.class, e -> assertThat(e.kind()).isEqualTo(Kind.CLOSED));
        assertThatThrownBy(() -> a.engine.connect(b.id, b.engine.localDescriptor(), CONNECT_NANOS))
                .isInstanceOfSatisfying(
                        TransferException.class, e -> assertThat(e.kind()).isEqualTo(Kind.CLOSED));
    }

    @Test
    void shouldDisconnectAndReconnect() throws Exception {
        Node a = node("a:1", 2);
        Node b = node("b:1", 2);
        pair(a, b);
        PinnedAllocation dst = a.allocate(64 * KIB);
        PinnedAllocation src = b.allocate(64 * KIB);
        TestMemory.fill(src.address(), 64 * KIB, 9);

        a.engine.disconnect(b.id).get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(a.engine.isConnected(b.id)).isFalse();
        assertThat(peer(a.engine, b.id).lanes()).isEmpty();
        assertThatThrownBy(() -> a.engine.submit(b.id, TransferBatch.get(1).add(dst.address(), src.address(), 8), 1L))
                .isInstanceOfSatisfying(
                        TransferException.class, e -> assertThat(e.kind()).isEqualTo(Kind.NOT_CONNECTED));
        a.engine.disconnect(b.id).get(WAIT_SECONDS, TimeUnit.SECONDS); // nothing left to drop

        a.engine.connect(b.id, b.engine.localDescriptor(), CONNECT_NANOS).get(WAIT_SECONDS, TimeUnit.SECONDS);
        a.engine
                .connect(b.id, b.engine.localDescriptor(), CONNECT_NANOS)
                .get(WAIT_SECONDS, TimeUnit.SECONDS); // replaces
        TransferResult r = await(a.engine.submit(
                b.id, batch(Direction.GET, dst.address(), src.address(), 4, 16 * KIB), 30_000_000_000L));
        assertThat(r.isComplete()).isTrue();
        assertThat(TestMemory.firstMismatch(dst.address(), 64 * KIB, 9)).isEqualTo(-1);
        assertThat(peer(a.engine, b.id).connects()).isEqualTo(3);
    }

    @Test
    void shouldCompleteConcurrentBatchesFromManyThreadsByteExact() throws Exception {
        Node a = node("a:1", 2);
        Node b = node("b:1", 2);
        pair(a, b);
        int threads = 4;
        int rounds = 25;
        long sliceBytes = 256 * KIB;
        PinnedAllocation src = b.allocate(threads * sliceBytes);
        PinnedAllocation dst = a.allocate(threads * sliceBytes);
        TestMemory.fill(src.address(), src.sizeBytes(), 13);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Long>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long off = t * sliceBytes;
                results.add(pool.submit(() -> {
                    long mismatches = 0;
                    for (int round = 0; round < rounds; round++) {
                        TestMemory.zero(dst.address() + off, sliceBytes);
                        TransferResult r = await(a.engine.submit(
                                b.id,
                                batch(Direction.GET, dst.address() + off, src.address() + off, 8, sliceBytes / 8),
                                30_000_000_000L));
                        if (!r.isComplete()) {
                            throw new AssertionError(r.toString());
                        }
                        for (long i = 0; i < sliceBytes; i += 4093) {
                            byte got = io.pegaflow.sys.OffHeap.getByte(dst.address() + off + i);
                            mismatches += got == TestMemory.patternByte(13, off + i) ? 0 : 1;
                        }
                    }
                    return mismatches;
                }));
            }
            for (Future<Long> f : results) {
                assertThat(f.get(60, TimeUnit.SECONDS)).isZero();
            }
        } finally {
            pool.shutdownNow();
        }
        PeerView view = peer(a.engine, b.id);
        assertThat(view.batches()).isEqualTo((long) threads * rounds);
        assertThat(view.opsFailed()).isZero();
        assertThat(view.inFlightOps()).isZero();
        assertThat(TestMemory.firstMismatch(dst.address(), dst.sizeBytes(), 13)).isEqualTo(-1);
    }
}
