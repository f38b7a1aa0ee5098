package io.pegaflow.server.admin;

import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.metrics.EngineCounter;
import io.pegaflow.core.metrics.EngineMetricsView;
import io.pegaflow.core.ssd.SsdCounter;
import io.pegaflow.core.ssd.SsdStore;
import io.pegaflow.kernel.agent.AgentRunner;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.kernel.agent.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.annotation.JsonNaming;

/**
 * The last minutes of the cumulative counters the overview charts (requests by tier, bytes saved and loaded, SSD bytes
 * read and written), sampled every {@link #INTERVAL} so that a page opened now shows the recent past, not only what
 * happens while it is open. Rates and hit ratios are differences of two samples. Thread-safe: one monitor.
 */
public final class ThroughputHistory implements AutoCloseable {

    static final Duration INTERVAL = Duration.ofSeconds(5);

    /** Ten minutes of samples. */
    static final int CAPACITY = 120;

    /** One sample of cumulative counters; {@code tiers} maps each tier name ({@code ram}, {@code ssd}, ...) to blocks. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Sample(
            long tMs, Map<String, Long> tiers, long saveBytes, long loadBytes, long ssdReadBytes, long ssdWriteBytes) {
        public Sample {
            tiers = Map.copyOf(tiers);
        }
    }

    private final PegaEngine engine;
    private final Optional<SsdStore> ssd;
    private final Clock clock;
    private final ArrayDeque<Sample> samples = new ArrayDeque<>();
    private @Nullable AgentRunner sampler;

    ThroughputHistory(PegaEngine engine, Optional<SsdStore> ssd, Clock clock) {
        this.engine = engine;
        this.ssd = ssd;
        this.clock = clock;
    }

    /**
     * Takes the first sample now and one every {@link #INTERVAL} on an agent ({@code pega-admin-history}, a kernel
     * {@link Ticker}) until {@link #close()}.
     */
    ThroughputHistory start() {
        sample();
        long period = INTERVAL.toMillis();
        sampler = new Ticker(
                        "pega-admin-history",
                        NanoClock.SYSTEM,
                        List.of(Ticker.Tick.every(
                                "admin throughput sample", period, period, TimeUnit.MILLISECONDS, this::sample)))
                .start();
        return this;
    }

    /** Records the counters as they are now (the timer's task; tests call it to add a sample). */
    void sample() {
        EngineMetricsView m = engine.metrics();
        Map<String, Long> tiers = new TreeMap<>();
        for (String tier : m.tierNames()) {
            tiers.put(tier, m.tierRequests(tier));
        }
        long ssdRead =
                ssd.map(s -> s.metrics().count(SsdCounter.PREFETCH_BYTES)).orElse(0L);
        long ssdWrite = ssd.map(s -> s.metrics().count(SsdCounter.WRITE_BYTES)).orElse(0L);
        Sample s = new Sample(
                clock.millis(),
                tiers,
                m.count(EngineCounter.SAVE_BYTES),
                m.count(EngineCounter.LOAD_BYTES),
                ssdRead,
                ssdWrite);
        synchronized (samples) {
            if (samples.size() == CAPACITY) {
                samples.removeFirst();
            }
            samples.addLast(s);
        }
    }

    /** The wall clock the samples are stamped with; the admin documents' {@code now_ms} comes from it too. */
    Clock clock() {
        return clock;
    }

    /** The samples, oldest first. */
    List<Sample> samples() {
        synchronized (samples) {
            return new ArrayList<>(samples);
        }
    }

    @Override
    public void close() {
        AgentRunner r = sampler;
        if (r != null) {
            r.close(5, TimeUnit.SECONDS);
        }
    }
}
