package io.pegaflow.push;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongConsumer;

/**
 * The push engine's counters, written by its agents and RPC threads and read at scrape time (the server's
 * {@code ServerMeterBinder} binds them to the {@code pegaflow_pd_*} catalog entries). The per-layer lag is reported to a
 * bound sink (a timer) and its last and largest values are kept for the admin view.
 */
public final class PushStats {
    final AtomicLong pushesInFlight = new AtomicLong();
    final AtomicLong receivesInFlight = new AtomicLong();
    final LongAdder pushes = new LongAdder();
    final LongAdder receives = new LongAdder();
    final LongAdder bytesPushed = new LongAdder();
    final LongAdder bytesReceived = new LongAdder();
    final LongAdder pushFailures = new LongAdder();
    final LongAdder receiveFailures = new LongAdder();
    final AtomicLong lastLayerLagNanos = new AtomicLong();
    final AtomicLong maxLayerLagNanos = new AtomicLong();
    private volatile LongConsumer layerLagSink = nanos -> {};

    public long pushesInFlight() {
        return pushesInFlight.get();
    }

    public long receivesInFlight() {
        return receivesInFlight.get();
    }

    public long pushesCompleted() {
        return pushes.sum();
    }

    public long receivesCompleted() {
        return receives.sum();
    }

    public long bytesPushed() {
        return bytesPushed.sum();
    }

    public long bytesReceived() {
        return bytesReceived.sum();
    }

    public long pushFailures() {
        return pushFailures.sum();
    }

    public long receiveFailures() {
        return receiveFailures.sum();
    }

    public long lastLayerLagNanos() {
        return lastLayerLagNanos.get();
    }

    public long maxLayerLagNanos() {
        return maxLayerLagNanos.get();
    }

    /** Where each layer's lag (ready seen to arrival acknowledged) goes, e.g. a timer. */
    public void bindLayerLag(LongConsumer sink) {
        this.layerLagSink = sink;
    }

    void recordLayerLag(long nanos) {
        lastLayerLagNanos.set(nanos);
        maxLayerLagNanos.accumulateAndGet(nanos, Math::max);
        layerLagSink.accept(nanos);
    }
}
