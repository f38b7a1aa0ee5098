package io.pegaflow.core.metrics;

import java.util.Arrays;
import java.util.function.Function;

/**
 * One {@link DurationRecorder} per phase of a request ({@link SavePhase}, {@link LoadPhase}): an array indexed by the
 * phase's ordinal, so recording a phase is one array read and the recorder's call, with no allocation. Recorders
 * start as no-ops; the server binds them to its meters before traffic starts.
 *
 * <p>Thread-safety: {@link #of} may be called from any thread; {@link #bind} publishes a new array at once.
 *
 * @param <P> the phase enum
 */
@SuppressWarnings("EnumOrdinal") // an array indexed by ordinal, as EnumMap is, but with one volatile read per lookup
public final class PhaseRecorders<P extends Enum<P>> {
    private final P[] phases;
    private volatile DurationRecorder[] recorders;

    public PhaseRecorders(Class<P> type) {
        this.phases = type.getEnumConstants();
        DurationRecorder[] none = new DurationRecorder[phases.length];
        Arrays.fill(none, DurationRecorder.NOOP);
        this.recorders = none;
    }

    /** The recorder of {@code phase}. */
    public DurationRecorder of(P phase) {
        return recorders[phase.ordinal()];
    }

    /** Installs one recorder per phase ({@code null} answers keep the no-op). */
    public void bind(Function<P, DurationRecorder> recorder) {
        DurationRecorder[] next = new DurationRecorder[phases.length];
        for (P p : phases) {
            DurationRecorder r = recorder.apply(p);
            next[p.ordinal()] = r == null ? DurationRecorder.NOOP : r;
        }
        recorders = next;
    }
}
