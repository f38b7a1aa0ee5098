package io.pegaflow.metaserver.support;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock tests move by hand, so staleness and TTLs are exercised without sleeping. */
public final class AdjustableClock extends Clock {

    private final AtomicLong millis;

    public AdjustableClock(long startMillis) {
        this.millis = new AtomicLong(startMillis);
    }

    public AdjustableClock() {
        this(1_800_000_000_000L);
    }

    public void advance(Duration by) {
        millis.addAndGet(by.toMillis());
    }

    @Override
    public long millis() {
        return millis.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis.get());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
