package io.pegaflow.transfer.loopback;

import io.pegaflow.transfer.RegisteredRegion;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.LongFunction;
import org.jspecify.annotations.Nullable;

/**
 * A loopback "node" as peers in the same JVM reach it: its regions and whether it is alive. The process-wide
 * directory of nodes stands in for the network; a worker address is a node id and a lane index.
 *
 * <p>Peers copy from and into a node's memory under its read lock, and the node is marked dead under the write lock,
 * so once {@link #kill()} returned no peer touches the node's memory again and its owner may unmap it.
 */
final class LoopbackNode {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Map<Long, LoopbackNode> NODES = new ConcurrentHashMap<>();

    final long id;
    final List<RegisteredRegion> regions;
    /** Cleared by {@link #stop()}: the node keeps its connections and answers nothing (a stopped process). */
    private volatile boolean responsive = true;

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private boolean alive = true;

    private LoopbackNode(long id, List<RegisteredRegion> regions) {
        this.id = id;
        this.regions = regions;
    }

    /** Registers a new node under a fresh id; {@code regionsFor} builds its region table from that id. */
    static LoopbackNode register(LongFunction<List<RegisteredRegion>> regionsFor) {
        while (true) {
            long id = RANDOM.nextLong();
            LoopbackNode node = new LoopbackNode(id, List.copyOf(regionsFor.apply(id)));
            if (NODES.putIfAbsent(id, node) == null) {
                return node;
            }
        }
    }

    static @Nullable LoopbackNode find(long id) {
        return NODES.get(id);
    }

    /** Runs {@code copy} while the node is alive; false (and nothing run) when it is dead. */
    boolean whileAlive(Runnable copy) {
        lock.readLock().lock();
        try {
            if (!alive) {
                return false;
            }
            copy.run();
            return true;
        } finally {
            lock.readLock().unlock();
        }
    }

    boolean isResponsive() {
        return responsive;
    }

    /** From now on the node completes nothing, as a process stopped with SIGSTOP. */
    void stop() {
        responsive = false;
    }

    boolean isAlive() {
        lock.readLock().lock();
        try {
            return alive;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The node is gone: waits out copies in progress, refuses later ones. */
    void kill() {
        lock.writeLock().lock();
        try {
            alive = false;
        } finally {
            lock.writeLock().unlock();
        }
        NODES.remove(id, this);
    }

    /** Lane {@code lane}'s worker address: node id and lane index, little endian. */
    byte[] laneAddress(int lane) {
        return ByteBuffer.allocate(12)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putLong(id)
                .putInt(lane)
                .array();
    }

    /** The node id a worker address names, or 0 when it is not a loopback address. */
    static long idOf(byte[] laneAddress) {
        return laneAddress.length == 12
                ? ByteBuffer.wrap(laneAddress).order(ByteOrder.LITTLE_ENDIAN).getLong()
                : 0;
    }

    /** A region's "packed rkey": the owner's id and the region's index. */
    static byte[] regionToken(long nodeId, int region) {
        return ByteBuffer.allocate(12)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putLong(nodeId)
                .putInt(region)
                .array();
    }
}
