package io.pegaflow.core.metrics;

/** Receives durations from the engine; the server binds it to a histogram. Must be cheap and never throw. */
@FunctionalInterface
public interface DurationRecorder {
    void recordNanos(long nanos);

    DurationRecorder NOOP = nanos -> {};
}
