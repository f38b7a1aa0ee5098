package io.pegaflow.core.memory;

/** What the JVM may run on: the one place that asks, so that a later affinity-aware source changes one line. */
public final class CpuTopology {
    /** Used when the JVM reports no processors; matches the reference's fallback. */
    static final int FALLBACK_CORES = 8;

    private CpuTopology() {}

    /**
     * Cores this process may use. On Linux the JVM derives it from the affinity mask and cgroup CPU limits, so it is
     * what {@code taskset} or a container allows, not the machine total.
     */
    public static int availableCores() {
        int cores = Runtime.getRuntime().availableProcessors();
        return cores > 0 ? cores : FALLBACK_CORES;
    }
}
