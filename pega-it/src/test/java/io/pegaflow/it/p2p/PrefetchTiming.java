package io.pegaflow.it.p2p;

import com.google.protobuf.ByteString;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.proto.QueryResponse;
import io.pegaflow.testkit.MockScheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One {@code QueryPrefetch} request followed to its {@code Ready} answer, polled with the same req_id every
 * millisecond (vLLM polls once per scheduler step; a finer poll makes the measured time the fetch's, not the poll's).
 *
 * @param loadingAnswers how many {@code Loading} answers came before {@code Ready}
 * @param ready the {@code Ready} answer (its lease is the caller's to release)
 * @param nanos from sending the first query to receiving {@code Ready}
 */
record PrefetchTiming(int loadingAnswers, QueryReady ready, long nanos) {
    static PrefetchTiming untilReady(
            MockScheduler scheduler, String instanceId, List<ByteString> hashes, String reqId, Duration timeout)
            throws InterruptedException {
        long start = System.nanoTime();
        int loading = 0;
        while (true) {
            QueryResponse response = scheduler.query(instanceId, hashes, reqId);
            if (response.hasReady()) {
                return new PrefetchTiming(loading, response.getReady(), System.nanoTime() - start);
            }
            loading++;
            if (System.nanoTime() - start > timeout.toNanos()) {
                throw new AssertionError("query " + reqId + " still Loading after " + timeout);
            }
            TimeUnit.MILLISECONDS.sleep(1);
        }
    }

    double millis() {
        return nanos / 1e6;
    }
}
