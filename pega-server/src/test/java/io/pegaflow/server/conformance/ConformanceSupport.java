package io.pegaflow.server.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.ReferenceHarness;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/**
 * Helpers shared by the conformance classes. Adds no configuration, so every subclass runs against the one cached
 * server context of {@link ServerTestBase}.
 */
abstract class ConformanceSupport extends ServerTestBase {
    static final Duration WAIT = Duration.ofSeconds(10);

    /** A worker of the reference harness (one 4 × 1024 B layer) for {@code instanceId}. */
    MockVllmWorker.Builder refWorker(String instanceId) {
        return ReferenceHarness.worker(HOST, port()).instanceId(instanceId);
    }

    /** A worker without layers yet, for custom layouts. */
    MockVllmWorker.Builder bareWorker(String instanceId) {
        return MockVllmWorker.builder(HOST, port()).instanceId(instanceId);
    }

    /** Waits until {@code expected} blocks hit, then returns a fresh Ready (with its lease) under {@code reqId}. */
    QueryReady awaitReady(String instanceId, List<ByteString> hashes, long expected, String reqId) {
        scheduler.awaitHits(instanceId, hashes, expected, WAIT);
        QueryReady ready = scheduler.queryUntilReady(instanceId, hashes, reqId, WAIT);
        assertThat(ready.getNumHitBlocks()).isEqualTo(expected);
        return ready;
    }

    /** Asserts the call fails with exactly this code and description. */
    static void assertStatus(ThrowingCallable call, Status.Code code, String description) {
        assertThatThrownBy(call).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).as("code of %s", e.getStatus()).isEqualTo(code);
            assertThat(e.getStatus().getDescription()).isEqualTo(description);
        });
    }

    /** The status a failing call ends with. */
    static Status statusOf(ThrowingCallable call) {
        try {
            call.call();
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        } catch (Throwable t) {
            throw new AssertionError("expected a gRPC error, got " + t, t);
        }
        throw new AssertionError("expected a gRPC error, the call succeeded");
    }

    /**
     * How many mappings of {@code /dev/shm/<name>} this JVM holds. Client and server share the process, so a worker's
     * own mapping counts 1 and every server-side mapping adds one.
     */
    static long mappingsOf(String shmName) {
        try {
            return Files.readAllLines(Path.of("/proc/self/maps")).stream()
                    .filter(line -> line.contains("/dev/shm/" + shmName))
                    .count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The shm object behind a worker's first layer. */
    static String shmOf(MockVllmWorker w) {
        return w.layers().get(0).memory().name();
    }

    /** A 16-byte lease id no server issued. */
    static ByteString unknownLease() {
        byte[] id = new byte[16];
        id[6] = 0x40;
        id[15] = 0x5A;
        return ByteString.copyFrom(id);
    }
}
