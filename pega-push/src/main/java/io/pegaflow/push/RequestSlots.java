package io.pegaflow.push;

import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.Principal;
import java.util.HashMap;
import java.util.Map;

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
}
