package io.pegaflow.bench.fleet;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import io.pegaflow.bench.loadgen.Zipf;
import io.pegaflow.proto.MetaServerGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What every simulated node shares: the options and model, the statistics, the scheduler, and a few gRPC channels per
 * target. Hundreds of nodes multiplex over {@code --channels} HTTP/2 connections per metaserver; their callbacks run
 * on the channels' event loops (direct executor), so the simulator needs no thread per node.
 */
final class FleetContext implements AutoCloseable {

    private static final int MAX_MESSAGE_BYTES = 64 << 20;
    private static final long SHARED_TAG = 0L;
    private static final long UNIQUE_TAG = 1L << 62;

    final FleetOptions options;
    final FleetModel model;
    final FleetStats stats;
    final Scheduler scheduler;
    final Zipf prefixPopularity;
    private final List<List<ManagedChannel>> channels = new ArrayList<>();
    private final AtomicLong uniqueBlocks = new AtomicLong();

    /** Runs tasks at a {@link System#nanoTime()} instant on the simulator's driver thread. */
    interface Scheduler {
        void at(long nanos, Runnable task);
    }

    FleetContext(FleetOptions options, FleetStats stats, Scheduler scheduler) {
        this.options = options;
        this.model = options.model();
        this.stats = stats;
        this.scheduler = scheduler;
        this.prefixPopularity = new Zipf(options.prefixes, options.zipf);
        EpochHeader epochs = new EpochHeader();
        for (String target : options.targets) {
            int colon = target.lastIndexOf(':');
            String host = target.substring(0, colon);
            int port = Integer.parseInt(target.substring(colon + 1));
            List<ManagedChannel> perTarget = new ArrayList<>();
            for (int i = 0; i < options.channels; i++) {
                perTarget.add(NettyChannelBuilder.forAddress(host, port)
                        .usePlaintext()
                        .directExecutor()
                        .intercept(epochs)
                        .maxInboundMessageSize(MAX_MESSAGE_BYTES)
                        .withOption(ChannelOption.TCP_NODELAY, true)
                        .build());
            }
            channels.add(perTarget);
        }
    }

    int targets() {
        return channels.size();
    }

    /** The async stub node {@code node} uses on target {@code target}: nodes are spread over its channels. */
    MetaServerGrpc.MetaServerStub stub(int target, int node) {
        List<ManagedChannel> perTarget = channels.get(target);
        return MetaServerGrpc.newStub(perTarget.get(node % perTarget.size()));
    }

    /** Block {@code j} of shared prefix {@code prefix}: the same id on every node. */
    static long sharedBlock(int prefix, int j) {
        return SHARED_TAG | ((long) prefix << 24) | j;
    }

    /** A block no other request has. */
    long uniqueBlock() {
        return UNIQUE_TAG | uniqueBlocks.getAndIncrement();
    }

    /**
     * The 32-byte hash of a block id: the id itself, then mixed bits (as spread as a real content hash), so distinct
     * ids never collide.
     */
    static ByteString hash(long id) {
        byte[] out = new byte[32];
        long v = id;
        for (int word = 0; word < 4; word++) {
            for (int b = 0; b < 8; b++) {
                out[word * 8 + b] = (byte) (v >>> (56 - 8 * b));
            }
            v = mix64(v + 0x9E3779B97F4A7C15L * (word + 1));
        }
        return ByteString.copyFrom(out);
    }

    static List<ByteString> hashes(List<Long> ids) {
        List<ByteString> out = new ArrayList<>(ids.size());
        for (long id : ids) {
            out.add(hash(id));
        }
        return out;
    }

    /** Stafford's variant 13 of the SplitMix64 finaliser. */
    static long mix64(long z0) {
        long z = (z0 ^ (z0 >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    long rpcTimeoutMillis() {
        return options.rpcTimeoutDuration().toMillis();
    }

    @Override
    public void close() {
        for (List<ManagedChannel> perTarget : channels) {
            for (ManagedChannel c : perTarget) {
                c.shutdownNow();
            }
        }
        for (List<ManagedChannel> perTarget : channels) {
            for (ManagedChannel c : perTarget) {
                try {
                    c.awaitTermination(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
