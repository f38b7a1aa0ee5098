package io.pegaflow.kernel.agent;

/** Monotonic time source in nanoseconds. Injected everywhere a TTL or age is computed, so tests advance time. */
@FunctionalInterface
public interface NanoClock {
    long nanoTime();

    NanoClock SYSTEM = System::nanoTime;
}
