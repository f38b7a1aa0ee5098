package io.pegaflow.testkit;

import com.google.protobuf.ByteString;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.LeaseLoad;
import io.pegaflow.proto.LoadRequest;
import io.pegaflow.proto.LoadResponse;
import io.pegaflow.proto.QueryLoading;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.proto.QueryRequest;
import io.pegaflow.proto.QueryResponse;
import io.pegaflow.proto.RegisterContextRequest;
import io.pegaflow.proto.RegisterContextResponse;
import io.pegaflow.proto.ReleaseRequest;
import io.pegaflow.proto.ReleaseResponse;
import io.pegaflow.proto.ResponseStatus;
import io.pegaflow.proto.SaveLayer;
import io.pegaflow.proto.SaveRequest;
import io.pegaflow.proto.SaveResponse;
import io.pegaflow.proto.SessionEvent;
import io.pegaflow.proto.SessionRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A minimal in-process engine on the host backend, written from the reference's copy ranges and load state
 * independently of the testkit's own layout code, so the mock clients can be tested without the real server. One
 * instance, no slots, no eviction: just enough to move bytes and signal load states.
 */
final class FakeEngine extends EngineGrpc.EngineImplBase implements AutoCloseable {
    private static final Pattern DESCRIPTOR = Pattern.compile(
            "^\\{\"kind\":\"host-shm\",\"name\":\"(pega_[A-Za-z0-9._-]+)\",\"offset\":(\\d+),\"size\":(\\d+)\\}$");
    private static final ResponseStatus OK =
            ResponseStatus.newBuilder().setOk(true).build();

    private final Server server;
    private final ExecutorService loader = Executors.newSingleThreadExecutor();
    private final Map<String, Layer> layers = new ConcurrentHashMap<>();
    private final Map<String, byte[]> stored = new ConcurrentHashMap<>();
    private final Map<ByteString, List<ByteString>> leases = new ConcurrentHashMap<>();
    final List<RegisterContextRequest> registrations = new ArrayList<>();
    final AtomicInteger loadingAnswers = new AtomicInteger();
    final CountDownLatch sessionCancelled = new CountDownLatch(1);
    /** Counted down once the handler has its cancel hook: a stream cancelled before that never reaches it. */
    final CountDownLatch sessionOpened = new CountDownLatch(1);

    volatile SessionRequest lastSession;

    FakeEngine() throws IOException {
        server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .permitKeepAliveTime(30, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .addService(this)
                .build()
                .start();
    }

    int port() {
        return server.getPort();
    }

    @Override
    public void close() {
        try {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        loader.shutdownNow();
    }

    @Override
    public synchronized void registerContextBatch(
            RegisterContextRequest r, StreamObserver<RegisterContextResponse> out) {
        registrations.add(r);
        for (int i = 0; i < r.getLayerNamesCount(); i++) {
            Matcher m = DESCRIPTOR.matcher(r.getWrapperBytes(i).toString(StandardCharsets.UTF_8));
            if (!m.matches()) {
                out.onError(Status.INVALID_ARGUMENT
                        .withDescription("bad descriptor")
                        .asRuntimeException());
                return;
            }
            MappedByteBuffer map = map(m.group(1), Long.parseLong(m.group(2)), Long.parseLong(m.group(3)));
            layers.put(
                    r.getLayerNames(i), new Layer(map, r.getBytesPerBlock(i), r.getKvStrideBytes(i), r.getSegments(i)));
        }
        out.onNext(RegisterContextResponse.newBuilder().setStatus(OK).build());
        out.onCompleted();
    }

    @Override
    public void save(SaveRequest r, StreamObserver<SaveResponse> out) {
        for (SaveLayer s : r.getSavesList()) {
            Layer layer = layers.get(s.getLayerName());
            for (int i = 0; i < s.getBlockIdsCount(); i++) {
                stored.put(s.getLayerName() + "|" + s.getBlockHashes(i).toStringUtf8(), layer.read(s.getBlockIds(i)));
            }
        }
        out.onNext(SaveResponse.newBuilder().setStatus(OK).build());
        out.onCompleted();
    }

    @Override
    public void queryPrefetch(QueryRequest r, StreamObserver<QueryResponse> out) {
        if (loadingAnswers.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            out.onNext(QueryResponse.newBuilder()
                    .setLoading(QueryLoading.getDefaultInstance())
                    .build());
            out.onCompleted();
            return;
        }
        List<ByteString> hits = new ArrayList<>();
        for (ByteString h : r.getBlockHashesList()) {
            boolean all = layers.keySet().stream().allMatch(l -> stored.containsKey(l + "|" + h.toStringUtf8()));
            if (!all || layers.isEmpty()) {
                break;
            }
            hits.add(h);
        }
        ByteString lease = ByteString.EMPTY;
        if (!hits.isEmpty()) {
            lease = ByteString.copyFromUtf8(UUID.randomUUID().toString().substring(0, 16));
            leases.put(lease, hits);
        }
        out.onNext(QueryResponse.newBuilder()
                .setReady(QueryReady.newBuilder().setNumHitBlocks(hits.size()).setLease(lease))
                .build());
        out.onCompleted();
    }

    @Override
    public void release(ReleaseRequest r, StreamObserver<ReleaseResponse> out) {
        if (leases.remove(r.getLease()) == null) {
            out.onError(Status.FAILED_PRECONDITION
                    .withDescription("query lease is unknown or expired")
                    .asRuntimeException());
            return;
        }
        out.onNext(ReleaseResponse.getDefaultInstance());
        out.onCompleted();
    }

    @Override
    public void load(LoadRequest r, StreamObserver<LoadResponse> out) {
        java.nio.ByteBuffer state = map(r.getLoadStateShm(), 0, 32).order(ByteOrder.LITTLE_ENDIAN);
        List<Runnable> copies = new ArrayList<>();
        for (LeaseLoad l : r.getLoadsList()) {
            List<ByteString> hashes = leases.remove(l.getLease());
            if (hashes == null || hashes.size() != l.getBlockIdsCount()) {
                state.putLong(16, -1);
                out.onError(Status.INVALID_ARGUMENT
                        .withDescription("lease mismatch")
                        .asRuntimeException());
                return;
            }
            for (String name : r.getLayerNamesList()) {
                Layer layer = layers.get(name);
                for (int i = 0; i < hashes.size(); i++) {
                    byte[] data = stored.get(name + "|" + hashes.get(i).toStringUtf8());
                    int block = l.getBlockIds(i);
                    copies.add(() -> layer.write(block, data));
                }
            }
        }
        out.onNext(LoadResponse.newBuilder().setStatus(OK).build());
        out.onCompleted();
        // Like the reference: reply first, copy on the load thread, then publish the state.
        loader.execute(() -> {
            copies.forEach(Runnable::run);
            state.putLong(16, 1);
        });
    }

    @Override
    public void session(SessionRequest r, StreamObserver<SessionEvent> out) {
        lastSession = r;
        ServerCallStreamObserver<SessionEvent> call = (ServerCallStreamObserver<SessionEvent>) out;
        call.setOnCancelHandler(sessionCancelled::countDown);
        sessionOpened.countDown();
    }

    private static MappedByteBuffer map(String name, long offset, long size) {
        try (FileChannel ch =
                FileChannel.open(Path.of("/dev/shm", name), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            return ch.map(FileChannel.MapMode.READ_WRITE, offset, size);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One registered layer; copy ranges straight from the reference's layout rules. */
    private record Layer(MappedByteBuffer map, long b, long k, int g) {
        boolean split() {
            return g == 2 && k > b;
        }

        byte[] read(int block) {
            byte[] out = new byte[(int) (g * b)];
            if (split()) {
                map.get((int) (block * b), out, 0, (int) b);
                map.get((int) (block * b + k), out, (int) b, (int) b);
            } else {
                map.get((int) (block * b), out, 0, out.length);
            }
            return out;
        }

        void write(int block, byte[] data) {
            if (split()) {
                map.put((int) (block * b), data, 0, (int) b);
                map.put((int) (block * b + k), data, (int) b, (int) b);
            } else {
                map.put((int) (block * b), data, 0, data.length);
            }
        }
    }
}
