package io.pegaflow.push;

import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.Principal;
import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The slots of open pushes plus receives: {@code pega.pd.max-requests} in all, and at most
 * {@code pega.pd.max-requests-per-principal} for any one principal, so that one tenant holding receives open (each up
 * to its timeout) cannot refuse every other tenant's requests. Thread-safe; a slot is taken once and given back once by
 * the push or receive that holds it.
 */
final class RequestSlots {
    private final int total;
    private final int perPrincipal;
    /** Guarded by {@code this}. */
    private final Map<Principal, Integer> held = new HashMap<>();

    private int open;

    RequestSlots(int total, int perPrincipal) {
        this.total = total;
        this.perPrincipal = perPrincipal;
    }

    /**
     * Takes a slot for {@code who}.
     *
     * @throws EngineException RESOURCE_EXHAUSTED naming the bound that refused it
     */
    synchronized void acquire(Principal who) {
        if (open >= total) {
            throw EngineException.resourceExhausted(
                    "too many push requests in flight (pega.pd.max-requests is " + total + ")");
        }
        int mine = held.getOrDefault(who, 0);
        if (mine >= perPrincipal) {
            throw EngineException.resourceExhausted("this user holds " + mine + " push requests in flight, its share"
                    + " (pega.pd.max-requests-per-principal is " + perPrincipal + ")");
        }
        held.put(who, mine + 1);
        open++;
    }

    /** Gives back a slot {@link #acquire} took for {@code who}. */
    synchronized void release(Principal who) {
        int mine = held.getOrDefault(who, 0);
        if (mine <= 1) {
            held.remove(who);
        } else {
            held.put(who, mine - 1);
        }
        open--;
    }

    /**
     * Which share is used up, or null when every principal can still take a slot: all of {@code max-requests}, or one
     * principal's whole share (the principal is not named: health is read by other callers).
     */
    synchronized @Nullable String saturation() {
        if (open >= total) {
            return "every push request slot is held (" + open + ", pega.pd.max-requests): every PrepareReceive and"
                    + " StartPush is RESOURCE_EXHAUSTED";
        }
        int full = 0;
        for (int mine : held.values()) {
            if (mine >= perPrincipal) {
                full++;
            }
        }
        if (full == 0) {
            return null;
        }
        return full + (full == 1 ? " principal holds" : " principals hold") + " its whole share of push request slots ("
                + perPrincipal + ", pega.pd.max-requests-per-principal; " + open + " of " + total
                + " held in all): its further PrepareReceive and StartPush are RESOURCE_EXHAUSTED";
    }
}
