package io.pegaflow.core.engine;

import java.util.List;

/**
 * What {@link PegaEngine#restore} did with the journaled registrations at start.
 *
 * @param restored instances re-opened, now detached
 * @param dropped instances whose memory was gone (or otherwise refused), with the reason logged for each
 * @param layers layer mappings re-opened
 * @param nanos time the restore took, on the engine's clock
 */
public record RestoreReport(List<String> restored, List<String> dropped, int layers, long nanos) {
    /** Before any restore, or without a journal. */
    public static final RestoreReport NONE = new RestoreReport(List.of(), List.of(), 0, 0);

    public RestoreReport {
        restored = List.copyOf(restored);
        dropped = List.copyOf(dropped);
    }
}
