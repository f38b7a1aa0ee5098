package io.pegaflow.core.engine;

import io.pegaflow.core.device.Caller;
import io.pegaflow.core.device.DeviceBackend;
import io.pegaflow.core.device.DeviceCopier;
import io.pegaflow.core.device.LayerMemory;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.DeviceContext;
import io.pegaflow.core.instance.Instance;
import io.pegaflow.core.instance.InstanceLimits;
import io.pegaflow.core.instance.LayerRegistration;
import io.pegaflow.kernel.agent.AgentGroup;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * RegisterContextBatch: validate the request, map every layer, validate layouts, then create or join the instance and
 * install the device context.
 *
 * <p>Unlike the reference, a failure part-way never leaves mappings behind: every layer mapped by a failed request
 * is closed before the error is returned. The device and its layers are reserved against {@link EngineLimits} before
 * anything is mapped; the engine gives them back when the device context is torn down.
 */
final class RegisterPath {
    private static final Logger LOG = LoggerFactory.getLogger(RegisterPath.class);
    /** Preparing a lane allocates a few MiB of pinned and device memory: milliseconds, unless the driver is stuck. */
    private static final long PREPARE_WAIT_SECONDS = 10;

    private final InstanceRegistry instances;
    private final DeviceBackend backend;
    private final long hostAlignmentBytes;
    private final AgentGroup agents;
    private final RegistrationLog log;
    private final RegistrationBudget budget;
    private final int maxInstances;

    RegisterPath(
            InstanceRegistry instances,
            DeviceBackend backend,
            long hostAlignmentBytes,
            AgentGroup agents,
            RegistrationLog log,
            RegistrationBudget budget,
            int maxInstances) {
        this.instances = instances;
        this.budget = budget;
        this.maxInstances = maxInstances;
        this.agents = agents;
        this.backend = backend;
        this.hostAlignmentBytes = hostAlignmentBytes;
        this.log = log;
    }

    /**
     * Registers; with {@code journal}, the registration is durable in the {@link RegistrationLog} before the device
     * context is installed (a restore re-registers what is already journaled, without).
     */
    void register(RegisterCommand c, boolean journal) {
        validateShape(c);
        int n = c.layerNames().size();
        List<LayerMemory> mapped = new ArrayList<>(n);
        Caller caller = new Caller(c.instanceId(), c.callerUid());
        if (instances.get(c.instanceId()) == null) {
            instances.requireRoomForAnother(maxInstances); // checked again, atomically, when it is created
        }
        budget.reserve(n);
        boolean installed = false;
        boolean journaled = false;
        boolean succeeded = false;
        CompletableFuture<Void> prepared = CompletableFuture.completedFuture(null);
        try {
            for (int i = 0; i < n; i++) {
                mapped.add(
                        backend.openLayer(caller, c.deviceId(), c.wrapperBytes().get(i)));
            }
            // Validate layouts before any instance state changes (ids are assigned afterwards).
            for (int i = 0; i < n; i++) {
                LayerRegistration.validate(
                        c.layerNames().get(i),
                        -1,
                        mapped.get(i),
                        c.numBlocks()[i],
                        c.bytesPerBlock()[i],
                        c.kvStrideBytes()[i],
                        c.segments()[i],
                        hostAlignmentBytes);
            }
            Instance instance = instances.getOrCreate(
                    c.instanceId(),
                    c.namespace(),
                    (int) c.tpSize(),
                    (int) c.worldSize(),
                    (int) c.numLayers(),
                    c.principal(),
                    c.connector(),
                    maxInstances);
            if (c.tpRank() >= instance.tpSize()) {
                throw EngineException.invalidArgument(
                        "tp_rank " + c.tpRank() + " out of range (tp_size " + instance.tpSize() + ")");
            }
            // One registration of an instance at a time, from the seal check to the installed device: two workers
            // that complete the world together would otherwise each see the other missing, skip the seal, and leave
            // an instance sealed that no check saw whole.
            synchronized (instance) {
                // Before any id is assigned: a rejected request must not grow num_layers (and with it total_slots), or
                // every later block of the instance would wait for a slot nobody saves.
                if (instance.device(c.deviceId()) != null) {
                    throw deviceExists(c.deviceId());
                }
                if (!c.connector().generation().declaresLayerCount()) {
                    // the world_size-th worker seals; a failed seal refuses it
                    LayerSpaceSeal.check(instance, c, mapped);
                }
                int[] ids = instance.assignLayerIds(c.layerNames(), c.layerGroupIds(), c.deviceId());
                Map<String, LayerRegistration> layers = new LinkedHashMap<>();
                for (int i = 0; i < n; i++) {
                    layers.put(
                            c.layerNames().get(i),
                            LayerRegistration.validate(
                                    c.layerNames().get(i),
                                    ids[i],
                                    c.groupOf(i),
                                    mapped.get(i),
                                    c.numBlocks()[i],
                                    c.bytesPerBlock()[i],
                                    c.kvStrideBytes()[i],
                                    c.segments()[i],
                                    hostAlignmentBytes));
                }
                if (journal) {
                    try {
                        log.registered(c);
                        journaled = true;
                    } catch (UncheckedIOException e) {
                        throw EngineException.unavailable("registration of instance " + c.instanceId()
                                + " could not be journaled, so it would not survive a restart: " + e.getMessage());
                    }
                }
                DeviceCopier copier = backend.openCopier(c.deviceId());
                DeviceContext context = new DeviceContext(
                        c.instanceId(), c.deviceId(), (int) c.tpRank(), (int) c.ppRank(), layers, copier);
                context.start(agents);
                prepared = context.prepareLanes();
                if (!instance.addDevice(context)) {
                    context.close();
                    installed = true; // context.close() closed the mappings already
                    budget.release(n);
                    throw deviceExists(c.deviceId());
                }
            }
            installed = true;
            succeeded = true;
        } finally {
            if (!installed) {
                mapped.forEach(LayerMemory::close);
                budget.release(n);
            }
            if (journaled && !succeeded) {
                withdraw(c);
            }
        }
        awaitPrepared(prepared, c.instanceId());
    }

    /**
     * Lets the new device's lanes finish preparing (streams, descriptor buffers) before the worker is told it is
     * registered, so its first Save does not pay for them; a preparation that outlasts the wait goes on in the lane.
     */
    private static void awaitPrepared(CompletableFuture<Void> prepared, String instanceId) {
        try {
            prepared.get(PREPARE_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            LOG.warn(
                    "instance {}: the copy lanes did not prepare within {} s; its first copies create what is missing",
                    instanceId,
                    PREPARE_WAIT_SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            throw new IllegalStateException("a lane's preparation completes normally", e);
        }
    }

    /** A registration that failed after it was journaled must not come back at the next restart. */
    private void withdraw(RegisterCommand c) {
        try {
            log.withdrawn(c);
        } catch (RuntimeException e) {
            LOG.warn(
                    "the failed registration of instance {} could not be taken out of the journal; a restart may try"
                            + " it again: {}",
                    c.instanceId(),
                    e.toString());
        }
    }

    private static EngineException deviceExists(int deviceId) {
        return EngineException.invalidArgument("GPU context for device " + deviceId + " already exists");
    }

    /**
     * The RPC-boundary checks, in the reference's order with its exact texts. Connectors that send no
     * {@code num_layers} (G2, G3) skip the two checks on it: their layer space is what the workers register.
     */
    private static void validateShape(RegisterCommand c) {
        boolean declaresLayerCount = c.connector().generation().declaresLayerCount();
        if (c.deviceId() < 0) {
            throw EngineException.badRequest("device_id " + c.deviceId() + " must be >= 0");
        }
        if (declaresLayerCount && c.numLayers() == 0) {
            throw EngineException.badRequest("num_layers must be > 0");
        }
        if (c.tpSize() == 0) {
            throw EngineException.badRequest("tp_size must be > 0");
        }
        if (c.worldSize() == 0) {
            throw EngineException.badRequest("world_size must be > 0");
        }
        if (c.tpRank() >= c.tpSize()) {
            throw EngineException.badRequest("tp_rank " + c.tpRank() + " out of range (tp_size " + c.tpSize() + ")");
        }
        int n = c.layerNames().size();
        if (n == 0
                || c.wrapperBytes().size() != n
                || c.numBlocks().length != n
                || c.bytesPerBlock().length != n
                || c.kvStrideBytes().length != n
                || c.segments().length != n) {
            throw EngineException.badRequest(
                    "all layer arrays must have the same non-zero length (got layer_names=" + n + ")");
        }
        if (c.layerGroupIds().length != 0 && c.layerGroupIds().length != n) {
            throw EngineException.badRequest("registration metadata length mismatch: layer_names=" + n
                    + ", layer_group_ids=" + c.layerGroupIds().length);
        }
        for (int group : c.layerGroupIds()) {
            // A group holds at least one layer, so no real group id reaches the layer bound (ids arrive unsigned).
            requireAtMost("layer_group_id", Integer.toUnsignedLong(group), InstanceLimits.MAX_NUM_LAYERS - 1);
        }
        if (declaresLayerCount && c.declaresGroups()) {
            throw EngineException.badRequest("hybrid cache groups (layer_group_ids) need a connector that registers"
                    + " without num_layers (pegaflow-llm 0.23.11 or later)");
        }
        if (declaresLayerCount && n > c.numLayers()) {
            throw EngineException.badRequest("layer batch size " + n + " exceeds instance num_layers " + c.numLayers());
        }
        requireAtMost("tp_size", c.tpSize(), InstanceLimits.MAX_TP_SIZE);
        requireAtMost("world_size", c.worldSize(), InstanceLimits.MAX_WORLD_SIZE);
        requireAtMost("num_layers", c.numLayers(), InstanceLimits.MAX_NUM_LAYERS);
        if (c.numLayers() * c.tpSize() > InstanceLimits.MAX_SLOTS_PER_BLOCK) {
            throw EngineException.badRequest("num_layers " + c.numLayers() + " x tp_size " + c.tpSize()
                    + " exceeds the supported maximum of " + InstanceLimits.MAX_SLOTS_PER_BLOCK + " slots per block");
        }
        for (String name : c.layerNames()) {
            if (name.isEmpty()) {
                throw EngineException.badRequest("layer names must not be empty");
            }
            InstanceLimits.requireName("layer name", name);
        }
        InstanceLimits.requireName("instance_id", c.instanceId());
        InstanceLimits.requireName("namespace", c.namespace());
    }

    /** Sizes arrive as unsigned 32/64-bit values: anything past the bound, negative longs included, is refused. */
    private static void requireAtMost(String field, long value, long max) {
        if (value < 0 || value > max) {
            throw EngineException.badRequest(
                    field + " " + Long.toUnsignedString(value) + " exceeds the supported maximum of " + max);
        }
    }
}
