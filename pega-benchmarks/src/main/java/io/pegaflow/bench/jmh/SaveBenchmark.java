package io.pegaflow.bench.jmh;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;

/**
 * A {@link CpuPathBenchmark} whose timed region saves every block: each invocation first drains the index and takes
 * a new salt, untimed, so every block is a fresh insert and nothing is evicted while timed.
 */
public abstract class SaveBenchmark extends CpuPathBenchmark {
    private long salt;

    @Setup(Level.Invocation)
    public void nextInvocation() {
        fixture.cleanup();
        fixture.setSalt(++salt);
    }
}
