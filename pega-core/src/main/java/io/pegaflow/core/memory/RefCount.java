package io.pegaflow.core.memory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The one reference-count implementation (after Netty's {@code ReferenceCountUpdater}): the holder declares a
 * {@code private volatile int} field starting at 1 and a {@code static final RefCount} over it, and every change goes
 * through this class's compare-and-set loops. Used by {@code SealedBlock}, {@link PinnedAllocation} and the device
 * mapping cache (host shm and CUDA IPC mappings).
 *
 * <p>Rules, the same for every holder:
 *
 * <ul>
 *   <li>A count of 0 is final: {@link #tryRetain} refuses it, so a freed object is never revived, and no operation
 *       ever makes a 0 look positive for a moment (an add-then-undo would, and a concurrent {@code tryRetain} could
 *       take it: jcstress {@code SealedBlockStrayRetainVsTryRetain}).
 *   <li>{@link #release} returns true exactly once, to the caller whose release reached 0; that caller frees.
 *   <li>A release without a reference, a retain of a freed object and an overflow throw
 *       {@link IllegalStateException} and leave the count as it was.
 * </ul>
 *
 * <p>A record, so HotSpot trusts its final field: a {@code static final RefCount} folds to its {@link VarHandle} and
 * the calls inline to a plain CAS, as the per-class {@code VarHandle}s they replace did (jcstress
 * {@code SealedBlock*}, {@code PinnedAllocation*} and {@code MappingCache*} in {@code pega-concurrency-tests}).
 *
 * @param handle the holder's {@code int} field
 * @param what what the holder is, for error messages ({@code block}, {@code allocation})
 */
public record RefCount(VarHandle handle, String what) {

    /**
     * The count over {@code field} of {@code holder}, found through the holder's own lookup (so the field stays
     * private).
     */
    public static RefCount of(MethodHandles.Lookup lookup, Class<?> holder, String field, String what) {
        try {
            return new RefCount(lookup.findVarHandle(holder, field, int.class), what);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The current count of {@code holder}; 0 once freed. A snapshot. */
    public int get(Object holder) {
        return (int) handle.getVolatile(holder);
    }

    /** Adds a reference unless {@code holder} was already freed (the weak-reference upgrade); false then. */
    public boolean tryRetain(Object holder) {
        int current = (int) handle.getVolatile(holder);
        while (true) {
            if (current <= 0) {
                return false;
            }
            if (current == Integer.MAX_VALUE) {
                throw new IllegalStateException("reference count overflow of " + what + " " + holder);
            }
            int witness = (int) handle.compareAndExchange(holder, current, current + 1);
            if (witness == current) {
                return true;
            }
            current = witness;
        }
    }

    /**
     * Adds a reference; the caller must hold one already.
     *
     * @throws IllegalStateException when {@code holder} was already freed
     */
    public void retain(Object holder) {
        if (!tryRetain(holder)) {
            throw new IllegalStateException("retain of a released " + what + ": " + holder);
        }
    }

    /**
     * Drops a reference.
     *
     * @return true for the release that reached 0: the caller now frees the holder's resource
     * @throws IllegalStateException when the count is already 0 (a release without a matching reference)
     */
    public boolean release(Object holder) {
        int current = (int) handle.getVolatile(holder);
        while (true) {
            if (current <= 0) {
                throw new IllegalStateException("release of an already released " + what + ": " + holder);
            }
            int witness = (int) handle.compareAndExchange(holder, current, current - 1);
            if (witness == current) {
                return current == 1;
            }
            current = witness;
        }
    }
}
