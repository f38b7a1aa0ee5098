package io.pegaflow.bench.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A worker whose server is gone backs off instead of spinning (the old generator made 3.6 M failed calls in 14 s),
 * and the report says how often and for how long; Loading polls are counted and reported too.
 */
@Timeout(60)
class SimWorkerBackoffTest {

    private static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Test
    void shouldBackOffExponentiallyWhileTheServerIsUnavailable() throws IOException {
        int port = closedPort();
        LoadGenOptions options = LoadGenOptions.parse(
                "--target",
                "127.0.0.1:" + port,
                "--block-size",
                "4KiB",
                "--blocks-per-request",
                "2",
                "--prefixes",
                "4");
        BlockContent content = new BlockContent(1, options.blockBytes(), 1, options.hashBytes());
        Prefixes prefixes = new Prefixes(content, options.prefixes(), options.blocksPerRequest());
        Stats stats = new Stats();
        stats.startRecording();
        ManagedChannel channel = Channels.open("127.0.0.1", port);
        try (SimWorker worker =
                new SimWorker("backoff-test", options, channel, prefixes, stats, 1, 2, options.blockBytes())) {
            for (int i = 0; i < 5; i++) {
                worker.run(OpMix.Op.QUERY, 0, System.nanoTime());
            }
        } finally {
            Channels.close(channel);
        }
        assertThat(stats.errors.sum()).isEqualTo(5);
        assertThat(stats.unavailable.sum()).isEqualTo(5);
        // 10 + 20 + 40 + 80 + 160 ms: doubling from 10 ms (capped at 1 s).
        assertThat(stats.backoffNanos.sum()).isEqualTo(310_000_000L);

        Report report = new Report(options, 1.0, stats, List.of(stats.sample(0), stats.sample(1)));
        assertThat(report.table()).containsPattern("of which UNAVAILABLE +5").containsPattern("backed off .* +0\\.3");
        assertThat(report.json()).contains("\"unavailable\" : 5").contains("\"backoff_worker_s\" : 0.31");
    }

    @Test
    void shouldReportLoadingPolls() {
        LoadGenOptions options = LoadGenOptions.parse();
        Stats stats = new Stats();
        stats.startRecording();
        stats.loadingPolls.add(3);
        Report report = new Report(options, 1.0, stats, List.of(stats.sample(0), stats.sample(1)));
        assertThat(report.table()).containsPattern("loading polls +3");
        assertThat(report.json()).contains("\"loading_polls\" : 3");
    }
}
