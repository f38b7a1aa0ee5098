package io.pegaflow.node.remote;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.block.SlotData;
import io.pegaflow.core.memory.PinnedAllocation;
import io.pegaflow.core.tier.BackingTier;
import io.pegaflow.core.tier.ReclaimingAllocator;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.CommandQueue;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.agent.TaskAgents;
import io.pegaflow.kernel.plan.MergeRule;
import io.pegaflow.node.remote.PeerBlocks.Grant;
import io.pegaflow.node.remote.PeerBlocks.LockedBlock;
import io.pegaflow.node.remote.PeerBlocks.Slot;
import io.pegaflow.node.remote.RemoteFetchStats.Failure;
import io.pegaflow.transfer.PeerId;
import io.pegaflow.transfer.TransferBatch;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.TransferException;
import io.pegaflow.transfer.TransferResult;
import io.pegaflow.transfer.WireChecksum;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code remote} tier ({@code docs/architecture.md}, "The remote tier"): the blocks RAM and SSD could not supply,
 * fetched from the peer that owns the longest prefix of them. One fetch asks the metaserver for owners (dropping this
 * node), handshakes with the best one once, locks the blocks there ({@link PeerBlocks#lock}, the reference's
 * {@code QueryBlocksForTransfer}), gets their segments straight into freshly allocated pool memory over the transfer
 * engine, releases the lock, and rebuilds the blocks; the query path inserts them into the RAM index (and the index
 * announcements make this node an owner too).
 *
 * <p><b>Degrading, never failing.</b> Every failure (metaserver, handshake, a peer gone or fenced, a lock that expired,
 * a short answer, a full pool, a get that failed or timed out) gives a shorter prefix or nothing; the future always
 * completes normally.
 *
 * <p><b>Memory safety.</b> The local memory of a fetch is released only after the transfer engine completed its batch,
 * which it does only when no get can still land (every lane completed or closed its endpoint). If that completion
 * never comes (a bug below), the memory is leaked on purpose rather than reused under a late write. Only blocks whose
 * every byte arrived are rebuilt; a block is never partially filled and served.
 *
 * <p><b>The owner's lock bounds the gets</b> (decision 0017). The owner frees the blocks' memory for reuse once its
 * lock session expires, {@code lock_timeout_secs} (its own setting, in its answer) after it took the lock, whatever
 * this node's settings say. The lock was taken after this node sent {@code QueryBlocksForTransfer}, so a get whose
 * completion this node saw before {@code sent + lock_timeout_secs} read the owner's memory while the lock still held
 * it. The tier measures that deadline from the send, less {@link #LOCK_MARGIN_DIVISOR a margin} for the two clocks'
 * rates, clamps the batch's timeout to what is left of it, and uses nothing of a batch whose result it saw later (the
 * completion grace can outlast the lock), counting {@link Failure#LOCK_EXPIRED}.
 *
 * <p>Fetches run on a few worker agents of their own ({@code pega-remote-fetch-i}, kernel {@link TaskAgents}: each waits
 * for RPCs and gets); when their queue is full a fetch is refused and counts as a miss.
 *
 * <p>Ownership: the node that built the tier closes it, once, before the transfer engine; the engine only borrows
 * it for its tier chain. The tier closes its worker agents and its {@link PeerBlocks}, not the transfer engine.
 */
public final class RemoteFetchTier implements BackingTier {
    private static final Logger LOG = LoggerFactory.getLogger(RemoteFetchTier.class);

    /** The reference's label for blocks from a peer: its dashboards select {@code tier="rdma"}. */
    public static final String NAME = "rdma";
    /** Blocks are grouped into allocations of about this size, so one fetch needs few allocations. */
    public static final long CHUNK_BYTES = 4L << 20;
    /** Every rebuilt segment starts on a cache line. */
    static final long SEGMENT_ALIGNMENT = 64;
    /** Contiguous ranges (consecutive slots on both sides) merge into gets of at most this size. */
    public static final long MAX_GET_BYTES = 4L << 20;

    /** How long past the transfer timeout a batch may take to report (a dropped connection closing its endpoints). */
    static final long COMPLETION_GRACE_NANOS = TimeUnit.SECONDS.toNanos(20);

    /**
     * The owner's lock counts as {@code 1 - 1/50} of what it says: two hosts' monotonic clocks differ in rate by far
     * less than 2 % (NTP slews by at most 0.05 %).
     */
    static final long LOCK_MARGIN_DIVISOR = 50;

    private static final long CLOSE_WAIT_SECONDS = 30;
    private static final int THREADS = 4;
    private static final int QUEUE = 256;

    private final OwnerDirectory owners;
    private final TransferEngine transfers;
    private final PeerBlocks peers;
    private final PeerHandshakes handshakes;
    private final String self;
    private final RemoteConfig settings;
    private final NanoClock clock;
    private final RemoteFetchStats stats = new RemoteFetchStats();
    private final PeerLogLimiter checksumLog;
    private final TaskAgents fetchers;
    private final AgentGroup agents = new AgentGroup();
    private final AtomicBoolean closed = new AtomicBoolean();

    /** Who owns which prefix: the metaserver's {@code QueryPrefixBlocks}. */
    @FunctionalInterface
    public interface OwnerDirectory {
        /** Every owner with its contiguous prefix length of {@code hashes}; throws when it cannot answer. */
        List<Owner> owners(String namespace, List<byte[]> hashes);
    }

    /** A node (its advertised {@code host:port}) and how many leading hashes it holds. */
    public record Owner(String node, int prefixLength) {}

    /**
     * Starts the tier's fetch agents.
     *
     * @param self this node's advertised address: the requester id peers see, and the owner entry to skip
     * @param peers how the tier reaches owners; the tier owns it from here and closes it
     * @param connected told of each peer once a handshake with it succeeded
     */
    public RemoteFetchTier(
            OwnerDirectory owners,
            TransferEngine transfers,
            String self,
            RemoteConfig settings,
            NanoClock clock,
            PeerBlocks peers,
            Consumer<PeerId> connected) {
        this.owners = owners;
        this.transfers = transfers;
        this.self = self;
        this.settings = settings;
        this.clock = clock;
        this.peers = peers;
        this.checksumLog = new PeerLogLimiter(clock);
        this.handshakes = new PeerHandshakes(
                transfers, peers, self, settings.connectTimeout().toNanos(), connected);
        this.fetchers = new TaskAgents("pega-remote-fetch", THREADS, QUEUE, clock).start(agents);
    }

    @Override
    public String tierName() {
        return NAME;
    }

    /** A peer may still be saving what a waiting query asks for (a prefill node, for a decode node that waits). */
    @Override
    public boolean waitsForPeers() {
        return true;
    }

    public RemoteFetchStats stats() {
        return stats;
    }

    @Override
    public CompletableFuture<List<SealedBlock>> fetchPrefix(List<BlockKey> keys, ReclaimingAllocator memory) {
        if (keys.isEmpty() || closed.get()) {
            return CompletableFuture.completedFuture(List.of());
        }
        List<BlockKey> wanted = List.copyOf(keys.subList(0, Math.min(keys.size(), settings.maxFetchBlocks())));
        CompletableFuture<List<SealedBlock>> out = new CompletableFuture<>();
        Runnable run = () -> {
            stats.running.incrementAndGet();
            try {
                out.complete(fetch(wanted, memory));
            } catch (RuntimeException e) {
                LOG.error("remote fetch failed unexpectedly", e);
                out.complete(List.of());
            } finally {
                stats.running.decrementAndGet();
            }
        };
        Runnable refuse = () -> {
            stats.failed(Failure.REJECTED);
            out.complete(List.of());
        };
        if (fetchers.submit(new TaskAgents.Job("remote fetch", run, refuse)) != CommandQueue.Offer.ACCEPTED) {
            refuse.run();
        }
        return out;
    }

    private List<SealedBlock> fetch(List<BlockKey> keys, ReclaimingAllocator memory) {
        String namespace = keys.get(0).namespace();
        List<byte[]> hashes = new ArrayList<>(keys.size());
        for (BlockKey k : keys) {
            hashes.add(k.hash());
        }
        Owner best;
        try {
            best = best(owners.owners(namespace, hashes), keys.size());
        } catch (RuntimeException e) {
            stats.failed(Failure.METASERVER);
            LOG.warn("remote fetch: metaserver prefix query failed: {}", e.toString());
            return List.of();
        }
        if (best == null) {
            return List.of();
        }
        stats.attempts.increment();
        long started = clock.nanoTime();
        PeerId peer = new PeerId(best.node());
        List<BlockKey> asked = keys.subList(0, best.prefixLength());
        try {
            handshakes.ensureConnected(peer);
        } catch (Exception e) {
            stats.failed(Failure.HANDSHAKE);
            LOG.warn("remote fetch: handshake with {} failed: {}", peer, e.toString());
            return List.of();
        }
        Grant grant;
        // before the request leaves: the owner's lock, and its expiry, start after this
        long sent = clock.nanoTime();
        try {
            grant = peers.lock(
                    peer,
                    namespace,
                    hashes.subList(0, asked.size()),
                    self,
                    settings.wireChecksum(),
                    settings.rpcTimeout().toNanos());
        } catch (RuntimeException e) {
            stats.failed(Failure.QUERY);
            LOG.warn("remote fetch: QueryBlocksForTransfer to {} failed: {}", peer, e.toString());
            return List.of();
        }
        try {
            List<SealedBlock> got = transfer(peer, asked, grant, memory, lockDeadline(sent, grant));
            if (got.size() == asked.size()) {
                stats.succeeded.increment();
                stats.recordDuration(clock.nanoTime() - started);
            }
            return got;
        } finally {
            release(peer, grant.session());
        }
    }

    /**
     * When, on this node's clock, the owner's lock may end: {@code sent} plus the lock timeout the owner reported, less
     * the margin. An owner that reported 0 (a lock under a second, or a peer that does not say) gives no time at all.
     */
    static long lockDeadline(long sent, Grant grant) {
        long lock = TimeUnit.SECONDS.toNanos(grant.lockTimeoutSeconds());
        return sent + lock - lock / LOCK_MARGIN_DIVISOR;
    }

    /** The owner with the longest prefix other than this node, or null when nobody else has the first block. */
    private @Nullable Owner best(List<Owner> candidates, int asked) {
        Owner best = null;
        for (Owner o : candidates) {
            if (o.node().equals(self) || o.prefixLength() <= 0) {
                continue;
            }
            if (best == null || o.prefixLength() > best.prefixLength()) {
                best = o;
            }
        }
        return best == null ? null : new Owner(best.node(), Math.min(best.prefixLength(), asked));
    }

    /** The blocks of the grant that match the asked keys in order, got into local memory and rebuilt. */
    private List<SealedBlock> transfer(
            PeerId peer, List<BlockKey> asked, Grant grant, ReclaimingAllocator memory, long lockDeadline) {
        int usable = usablePrefix(asked, grant);
        if (usable < asked.size()) {
            stats.failed(Failure.SHORT);
        }
        if (usable == 0) {
            return List.of();
        }
        Plan plan = plan(grant, usable, memory);
        if (plan.blocks < usable) {
            stats.failed(Failure.ALLOCATION);
        }
        try {
            if (plan.blocks == 0) {
                return List.of();
            }
            int arrived = get(peer, grant, plan, lockDeadline);
            if (plan.lockExpired) {
                stats.failed(Failure.LOCK_EXPIRED);
            } else if (arrived < plan.blocks) {
                stats.failed(Failure.TRANSFER);
            }
            int completedBlocks = verified(peer, grant, plan, arrived);
            List<SealedBlock> out = new ArrayList<>(completedBlocks);
            for (int b = 0; b < completedBlocks; b++) {
                out.add(rebuild(grant.blocks().get(b), plan, b));
            }
            for (SealedBlock block : out) {
                stats.bytes.add(block.footprintBytes());
            }
            stats.blocks.add(out.size());
            return out;
        } finally {
            if (plan.reusable) {
                for (PinnedAllocation a : plan.chunks) {
                    a.release(); // the rebuilt blocks' slots hold their own references
                }
            } else {
                LOG.error(
                        "remote fetch from {}: a get batch never completed; leaking {} allocations rather than"
                                + " reusing memory a late get may still write",
                        peer,
                        plan.chunks.size());
            }
        }
    }

    /**
     * How many of the {@code arrived} leading blocks match the owner's checksums: all of them when checksums are off
     * or the owner sent none (a reference owner). The first block that does not match, and every block after it, is a
     * miss; its memory goes back with the plan's chunks, unread.
     */
    private int verified(PeerId peer, Grant grant, Plan plan, int arrived) {
        ArrivalTap tap = arrivalTap;
        if (tap != null) {
            for (int b = 0; b < arrived; b++) {
                tap.arrived(b, plan.local[b].clone());
            }
        }
        if (!settings.wireChecksum() || arrived == 0) {
            return arrived;
        }
        int[] expected = grant.checksums();
        if (expected.length == 0) {
            return arrived;
        }
        for (int b = 0; b < arrived; b++) {
            List<Slot> slots = grant.blocks().get(b).slots();
            WireChecksum crc = new WireChecksum();
            for (int s = 0; s < slots.size(); s++) {
                Slot slot = slots.get(s);
                crc.add(plan.local[b][2 * s], slot.kSize());
                if (slot.vSize() > 0) {
                    crc.add(plan.local[b][2 * s + 1], slot.vSize());
                }
            }
            if (crc.value() != expected[b]) {
                stats.failed(Failure.CHECKSUM);
                if (checksumLog.firstInInterval(peer)) {
                    LOG.warn(
                            "remote fetch from {}: block {} of {} does not match the owner's CRC32C (got {}, the owner"
                                    + " sent {}): it and the {} after it are a miss (logged once a minute per peer)",
                            peer,
                            b,
                            arrived,
                            Integer.toHexString(crc.value()),
                            Integer.toHexString(expected[b]),
                            arrived - b - 1);
                }
                return b;
            }
        }
        return arrived;
    }

    /** Sees each arrived block's local segment addresses before they are verified (tests corrupt bytes here). */
    @FunctionalInterface
    public interface ArrivalTap {
        void arrived(int block, long[] localSegments);
    }

    private volatile @Nullable ArrivalTap arrivalTap;

    /** For tests that corrupt bytes on their way; null removes it. */
    public void arrivalTap(@Nullable ArrivalTap tap) {
        this.arrivalTap = tap;
    }

    /** How many leading blocks of the grant are the asked keys, in order, with segments this node can rebuild. */
    static int usablePrefix(List<BlockKey> asked, Grant grant) {
        int n = Math.min(asked.size(), grant.blocks().size());
        int slots = n == 0 ? 0 : grant.blocks().get(0).slots().size();
        for (int i = 0; i < n; i++) {
            LockedBlock b = grant.blocks().get(i);
            if (!Arrays.equals(b.hash(), asked.get(i).hash()) || b.slots().size() != slots || slots == 0) {
                return i;
            }
            for (Slot s : b.slots()) {
                if (!rebuildable(s)) {
                    return i;
                }
            }
        }
        return n;
    }

    /** Segment 0 present; segment 1 absent (contiguous) or as long as segment 0 (split K/V). */
    static boolean rebuildable(Slot s) {
        if (s.kAddress() == 0 || s.kSize() <= 0 || s.kSize() > (1L << 40)) {
            return false;
        }
        if (s.vAddress() == 0 && s.vSize() == 0) {
            return true;
        }
        return s.vAddress() != 0 && s.vSize() == s.kSize();
    }

    /** Where each block's segments go: chunks allocated for whole blocks, in order, stopping at the first refusal. */
    static final class Plan {
        final List<PinnedAllocation> chunks = new ArrayList<>();
        /** Per block: its chunk index; per segment (2 per slot): the local address, 0 for an absent V. */
        final int[] chunkOf;

        final long[][] local;
        int blocks;
        boolean reusable = true;
        /** The owner's lock may have ended before this node saw the gets complete: nothing of them is used. */
        boolean lockExpired;

        Plan(int capacity) {
            chunkOf = new int[capacity];
            local = new long[capacity][];
        }
    }

    private static Plan plan(Grant grant, int usable, ReclaimingAllocator memory) {
        Plan plan = new Plan(usable);
        int b = 0;
        while (b < usable) {
            // whole blocks up to the chunk size (at least one block)
            long bytes = 0;
            int end = b;
            while (end < usable) {
                long next = footprint(grant.blocks().get(end));
                if (end > b && bytes + next > CHUNK_BYTES) {
                    break;
                }
                bytes += next;
                end++;
            }
            PinnedAllocation chunk = memory.allocate(bytes);
            if (chunk == null) {
                break;
            }
            plan.chunks.add(chunk);
            long at = chunk.address();
            for (int i = b; i < end; i++) {
                LockedBlock block = grant.blocks().get(i);
                long[] addrs = new long[2 * block.slots().size()];
                for (int s = 0; s < block.slots().size(); s++) {
                    Slot slot = block.slots().get(s);
                    addrs[2 * s] = at;
                    at += align(slot.kSize());
                    if (slot.vSize() > 0) {
                        addrs[2 * s + 1] = at;
                        at += align(slot.vSize());
                    }
                }
                plan.chunkOf[i] = plan.chunks.size() - 1;
                plan.local[i] = addrs;
            }
            plan.blocks = end;
            b = end;
        }
        return plan;
    }

    private static long footprint(LockedBlock block) {
        long bytes = 0;
        for (Slot s : block.slots()) {
            bytes += align(s.kSize()) + align(s.vSize());
        }
        return bytes;
    }

    private static long align(long bytes) {
        return (bytes + SEGMENT_ALIGNMENT - 1) & -SEGMENT_ALIGNMENT;
    }

    /**
     * Gets every planned segment in one batch and waits for its result: the engine completes it only once no get can
     * still land, so the memory of blocks that did not arrive may be released then. The batch may take what is left
     * before {@code lockDeadline}, at most the transfer timeout; a result seen at or after the deadline is not used.
     *
     * @return how many leading blocks arrived whole while the owner's lock held them
     */
    private int get(PeerId peer, Grant grant, Plan plan, long lockDeadline) {
        TransferBatch batch = TransferBatch.get(
                plan.blocks * 2 * grant.blocks().get(0).slots().size(), MergeRule.upTo(MAX_GET_BYTES));
        int[] endOp = new int[plan.blocks];
        for (int b = 0; b < plan.blocks; b++) {
            LockedBlock block = grant.blocks().get(b);
            for (int s = 0; s < block.slots().size(); s++) {
                Slot slot = block.slots().get(s);
                batch.add(plan.local[b][2 * s], slot.kAddress(), slot.kSize());
                if (slot.vSize() > 0) {
                    batch.add(plan.local[b][2 * s + 1], slot.vAddress(), slot.vSize());
                }
            }
            endOp[b] = batch.size();
        }
        long left = lockDeadline - clock.nanoTime();
        if (left <= 0) {
            LOG.warn("remote fetch from {}: the owner's lock may have ended before the gets could start", peer);
            plan.lockExpired = true;
            return 0; // nothing was issued: the memory is free to go
        }
        long timeout = Math.min(settings.transferTimeout().toNanos(), left);
        CompletableFuture<TransferResult> pending;
        try {
            pending = transfers.submit(peer, batch, timeout);
        } catch (TransferException e) {
            LOG.warn("remote fetch from {}: nothing submitted: {}", peer, e.getMessage());
            return 0; // nothing was issued: the memory is free to go
        }
        TransferResult result;
        try {
            result = pending.get(timeout + COMPLETION_GRACE_NANOS, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            plan.reusable = false;
            return 0;
        } catch (ExecutionException | TimeoutException e) {
            plan.reusable = false;
            return 0;
        }
        if (clock.nanoTime() - lockDeadline >= 0) {
            // a get that completed now may have read memory the owner had already freed and reused
            LOG.warn(
                    "remote fetch from {}: the gets ended after the owner's lock may have (lock_timeout_secs={}):"
                            + " nothing of them is used",
                    peer,
                    grant.lockTimeoutSeconds());
            plan.lockExpired = true;
            return 0;
        }
        if (!result.isComplete()) {
            LOG.warn("remote fetch from {}: {}", peer, result);
        }
        int done = result.completedPrefix();
        int blocks = 0;
        while (blocks < plan.blocks && endOp[blocks] <= done) {
            blocks++;
        }
        return blocks;
    }

    private static SealedBlock rebuild(LockedBlock block, Plan plan, int b) {
        PinnedAllocation chunk = plan.chunks.get(plan.chunkOf[b]);
        SlotData[] slots = new SlotData[block.slots().size()];
        for (int s = 0; s < slots.length; s++) {
            Slot slot = block.slots().get(s);
            long k = plan.local[b][2 * s];
            slots[s] = slot.vSize() > 0
                    ? SlotData.split(chunk, k, chunk, plan.local[b][2 * s + 1], slot.kSize())
                    : SlotData.contiguous(chunk, k, slot.kSize());
        }
        return new SealedBlock(slots);
    }

    /** Fire-and-forget, as the reference: the session expires at the owner anyway if this is lost. */
    private void release(PeerId peer, String session) {
        if (!session.isEmpty()) {
            peers.release(peer, session, settings.rpcTimeout().toNanos());
        }
    }

    /** Stops taking fetches, waits (bounded) for running ones, closes the peer connections. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        // queued fetches that no worker reaches in time complete empty (a miss), never hang their query
        if (!fetchers.close(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)) {
            LOG.warn("remote fetches still running after {} s at close", CLOSE_WAIT_SECONDS);
        }
        peers.close();
    }
}
