package io.pegaflow.push.bench;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.pegaflow.proto.ext.push.LayerReadyAck;
import io.pegaflow.proto.ext.push.LayerReadyEvent;
import io.pegaflow.proto.ext.push.PdPushGrpc;
import io.pegaflow.push.signal.LayerReadySignal;
import io.pegaflow.testkit.LayerReadyShm;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * How a prefill worker should say "layer L is ready" (docs/design/pd-push.md §2): a store into the layer-ready shm
 * object that the push agent reads with {@code pread} every 20 µs, against one message on a bidirectional gRPC stream
 * over loopback TCP. For each it prints what the worker pays per layer (the call's own time) and how long until the
 * server side noticed, p50/p99/max over {@code layers} signals spaced {@code gapMicros} apart (a layer's compute).
 *
 * <pre>
 *   ./mvnw -q -o -pl pega-push -am test-compile
 *   java -cp "$(cat pega-push/target/test-classpath.txt):pega-push/target/classes:pega-push/target/test-classes" \
 *       io.pegaflow.push.bench.PushSignalBench [layers=2000] [gapMicros=500]
 * </pre>
 *
 * Worker and server are two threads of one JVM here; in production they are two processes, which changes neither
 * the store's cost nor the stream's syscalls.
 */
public final class PushSignalBench {
    private PushSignalBench() {}

    public static void main(String[] args) throws Exception {
        int layers = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        long gapNanos = (args.length > 1 ? Long.parseLong(args[1]) : 500) * 1000;
        System.out.println("signals=" + layers + " gap=" + gapNanos / 1000 + "us");
        shm(layers / 5, gapNanos, false); // warm-up
        report("shm counter (pread poll, 20 us park)", shm(layers, gapNanos, true));
        grpc(layers / 5, gapNanos, false);
        report("bidi gRPC stream (loopback TCP)", grpc(layers, gapNanos, true));
    }

    private record Result(long[] costNanos, long[] latencyNanos) {}

    private static Result shm(int n, long gapNanos, boolean keep) throws Exception {
        long[] cost = new long[n];
        long[] latency = new long[n];
        long[] writtenAt = new long[n];
        AtomicLong seen = new AtomicLong();
        try (LayerReadyShm worker = LayerReadyShm.create(n);
                LayerReadySignal server = LayerReadySignal.open(worker.name(), n)) {
            Thread poller = new Thread(() -> {
                int last = 0;
                while (last < n) {
                    int ready = server.poll();
                    long now = System.nanoTime();
                    for (int i = last; i < ready; i++) {
                        latency[i] = now - writtenAt[i];
                    }
                    if (ready > last) {
                        last = ready;
                        seen.set(last);
                    } else {
                        LockSupport.parkNanos(20_000);
                    }
                }
            });
            poller.start();
            for (int i = 0; i < n; i++) {
                writtenAt[i] = System.nanoTime();
                worker.markReady(i + 1);
                cost[i] = System.nanoTime() - writtenAt[i];
                spin(gapNanos);
            }
            poller.join(60_000);
        }
        return keep ? new Result(cost, latency) : null;
    }

    private static Result grpc(int n, long gapNanos, boolean keep) throws Exception {
        long[] cost = new long[n];
        long[] latency = new long[n];
        long[] sentAt = new long[n];
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .addService(new PdPushGrpc.PdPushImplBase() {
                    @Override
                    public StreamObserver<LayerReadyEvent> streamLayerReady(StreamObserver<LayerReadyAck> out) {
                        return new StreamObserver<>() {
                            @Override
                            public void onNext(LayerReadyEvent e) {
                                latency[e.getLayer()] = System.nanoTime() - sentAt[e.getLayer()];
                            }

                            @Override
                            public void onError(Throwable t) {}

                            @Override
                            public void onCompleted() {
                                out.onCompleted();
                            }
                        };
                    }
                })
                .build()
                .start();
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
                .usePlaintext()
                .build();
        try {
            java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
            StreamObserver<LayerReadyEvent> stream = PdPushGrpc.newStub(ch).streamLayerReady(new StreamObserver<>() {
                @Override
                public void onNext(LayerReadyAck a) {}

                @Override
                public void onError(Throwable t) {
                    done.countDown();
                }

                @Override
                public void onCompleted() {
                    done.countDown();
                }
            });
            for (int i = 0; i < n; i++) {
                LayerReadyEvent e =
                        LayerReadyEvent.newBuilder().setPushId(1).setLayer(i).build();
                sentAt[i] = System.nanoTime();
                stream.onNext(e);
                cost[i] = System.nanoTime() - sentAt[i];
                spin(gapNanos);
            }
            stream.onCompleted();
            done.await(30, TimeUnit.SECONDS);
        } finally {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        return keep ? new Result(cost, latency) : null;
    }

    private static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }

    private static void report(String what, Result r) {
        System.out.println(what);
        System.out.println("  worker cost per signal: " + summary(r.costNanos()));
        System.out.println("  signal to server seeing it: " + summary(r.latencyNanos()));
    }

    private static String summary(long[] v) {
        long[] s = v.clone();
        Arrays.sort(s);
        return String.format(
                Locale.ROOT,
                "p50 %.2f us, p99 %.2f us, max %.2f us",
                s[s.length / 2] / 1e3,
                s[(int) (s.length * 0.99)] / 1e3,
                s[s.length - 1] / 1e3);
    }
}
