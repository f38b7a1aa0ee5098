package io.pegaflow.core.engine;

import io.pegaflow.core.instance.Principal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Layers that a feature beside the cache maps for an instance (the P/D push's {@code RegisterPushLayers}), held to
 * the rules of an engine registration (decision 0021):
 *
 * <ul>
 *   <li><b>one owner per instance id</b>: the principal that holds the id in the engine (its registration or its
 *       Session) or beside it owns every registration under it; another principal is refused with the engine's
 *       PERMISSION_DENIED text before anything is mapped, and a RegisterContext or Session of another principal is
 *       refused while side registrations hold the id;
 *   <li><b>one budget</b>: each registration reserves its mappings from {@code pega.limits.mapped-objects}, shared with
 *       the engine's own layers, and gives them back when its {@link Ticket} closes;
 *   <li><b>one lifecycle</b>: when the engine ends an instance (Unregister, its Session closing, an operator's cleanup,
 *       an idle restored instance) every listener hears it, so the side registrations of that id end with it.
 * </ul>
 *
 * <p>Thread-safe. Listeners are called on the thread that ended the instance, under no engine lock.
 */
public final class SideRegistrations {
    private final RegistrationBudget budget;
    private final OwnerRule engineOwners;
    private final List<Consumer<String>> listeners = new CopyOnWriteArrayList<>();
    /** Guarded by {@code this}. */
    private final Map<String, Holder> holders = new HashMap<>();

    /** The engine's own owner rule (its instances and Sessions). */
    @FunctionalInterface
    interface OwnerRule {
        void requireOwnerOrAbsent(String instanceId, Principal caller);
    }

    private static final class Holder {
        final Principal owner;
        int tickets;

        Holder(Principal owner) {
            this.owner = owner;
        }
    }

    SideRegistrations(RegistrationBudget budget, OwnerRule engineOwners) {
        this.budget = budget;
        this.engineOwners = engineOwners;
    }

    /**
     * Admits a registration of {@code layers} mappings under {@code instanceId} for {@code caller}.
     *
     * @return the registration's hold on the id and the budget; close it once, after its mappings are closed
     * @throws io.pegaflow.core.error.EngineException PERMISSION_DENIED when another principal holds the id,
     *     RESOURCE_EXHAUSTED naming {@code pega.limits.mapped-objects}
     */
    public Ticket admit(String instanceId, Principal caller, int layers) {
        synchronized (this) {
            engineOwners.requireOwnerOrAbsent(instanceId, caller);
            Holder h = holders.get(instanceId);
            if (h != null && !h.owner.equals(caller)) {
                throw InstanceRegistry.notOwner(instanceId);
            }
            budget.reserveMappings(layers);
            if (h == null) {
                h = new Holder(caller);
                holders.put(instanceId, h);
            }
            h.tickets++;
        }
        return new Ticket(instanceId, layers);
    }

    /**
     * Listens for the engine ending instances; the returned handle stops listening.
     *
     * @param ended called with the id of each instance the engine ended
     */
    public AutoCloseable onInstanceEnded(Consumer<String> ended) {
        listeners.add(ended);
        return () -> listeners.remove(ended);
    }

    /**
     * The part of the engine's owner rule for ids held beside the engine: every RPC that names such an id (a push, a
     * receive) checks it.
     *
     * @throws io.pegaflow.core.error.EngineException PERMISSION_DENIED when another principal holds the id
     */
    public synchronized void requireOwnerOrAbsent(String instanceId, Principal caller) {
        Holder h = holders.get(instanceId);
        if (h != null && !h.owner.equals(caller)) {
            throw InstanceRegistry.notOwner(instanceId);
        }
    }

    /** The ids that side registrations hold. */
    synchronized List<String> ids() {
        return new ArrayList<>(holders.keySet());
    }

    /** The engine ended {@code instanceId}: every listener drops what it holds under it. */
    void instanceEnded(String instanceId) {
        for (Consumer<String> l : listeners) {
            l.accept(instanceId);
        }
    }

    private synchronized void release(String instanceId, int layers) {
        budget.releaseMappings(layers);
        Holder h = holders.get(instanceId);
        if (h != null && --h.tickets == 0) {
            holders.remove(instanceId);
        }
    }

    /** One registration's hold on its instance id and its mappings; {@link #close()} gives both back, once. */
    public final class Ticket implements AutoCloseable {
        private final String instanceId;
        private final int layers;
        private boolean closed;

        private Ticket(String instanceId, int layers) {
            this.instanceId = instanceId;
            this.layers = layers;
        }

        @Override
        public void close() {
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
            }
            release(instanceId, layers);
        }
    }
}
