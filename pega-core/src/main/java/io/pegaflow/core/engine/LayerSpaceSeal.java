package io.pegaflow.core.engine;

import io.pegaflow.core.device.LayerMemory;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.DeviceContext;
import io.pegaflow.core.instance.Instance;
import io.pegaflow.core.instance.LayerRegistration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Sealing the layer space of an instance whose connector sends no {@code num_layers} (G2, G3), as upstream does it
 * (pegaflow-llm 0.22.9, upstream #346; {@code pegaflow-core/src/instance.rs} {@code seal_topology} at commit
 * {@code d3ed31a}): the {@code world_size}-th registration completes the instance, so it is checked against every
 * worker before it: the same layer name has the same geometry on every device, and every {@code (layer, tp_rank)}
 * slot of the union of names has an owner, from one pipeline stage. A failed seal refuses that registration before
 * anything of it is installed, and the instance keeps waiting for a corrected worker.
 *
 * <p>Upstream numbers the sealed layers in name order; this server keeps its deterministic order of first
 * registration (docs/decisions/0001), which the seal does not change.
 */
final class LayerSpaceSeal {
    private LayerSpaceSeal() {}

    /** One layer as a worker declared it: the geometry that must agree and who owns its slot. */
    private record Claim(
            String layer, int group, long bytesPerBlock, long segments, int deviceId, int tpRank, int ppRank) {}

    /**
     * @param mapped the pending registration's layers, opened already, in the order of {@code c.layerNames()}
     * @throws EngineException INVALID_ARGUMENT with upstream's texts when the instance is complete already, or the
     *     pending worker would complete it with an inconsistent or incomplete layer space
     */
    static void check(Instance instance, RegisterCommand c, List<LayerMemory> mapped) {
        List<DeviceContext> devices = instance.devices();
        if (devices.size() >= instance.worldSize()) {
            throw EngineException.invalidArgument("instance " + instance.id() + " is already fully registered ("
                    + instance.worldSize() + " workers); device " + c.deviceId() + " cannot join");
        }
        if (devices.size() + 1 < instance.worldSize()) {
            return;
        }
        List<Claim> claims = new ArrayList<>();
        for (DeviceContext device : devices) {
            for (LayerRegistration layer : device.layers().values()) {
                claims.add(new Claim(
                        layer.name(),
                        layer.group(),
                        layer.bytesPerBlock(),
                        layer.segments(),
                        device.deviceId(),
                        device.tpRank(),
                        device.ppRank()));
            }
        }
        for (int i = 0; i < mapped.size(); i++) {
            claims.add(new Claim(
                    c.layerNames().get(i),
                    c.groupOf(i),
                    c.bytesPerBlock()[i],
                    c.segments()[i],
                    c.deviceId(),
                    (int) c.tpRank(),
                    (int) c.ppRank()));
        }
        checkGeometry(claims);
        checkGroups(instance, claims);
        checkOwners(instance, claims);
    }

    /**
     * Storage groups (upstream #433) must be dense {@code 0..n}, since a group nobody registers would never seal its
     * blocks, and page-first keeps one group (its page holds every layer of a block). Whether a name keeps its group on
     * every device is checked as each worker registers ({@link Instance#assignLayerIds}).
     */
    private static void checkGroups(Instance instance, List<Claim> claims) {
        BitSet groups = new BitSet();
        for (Claim claim : claims) {
            groups.set(claim.group());
        }
        int count = groups.length();
        if (groups.cardinality() != count) {
            throw EngineException.invalidArgument(
                    "storage groups must be dense 0.." + count + ": an unregistered group would never seal its blocks");
        }
        if (instance.connector().pageFirst() && count > 1) {
            throw EngineException.invalidArgument(
                    "page-first storage does not support multiple storage groups (" + count + " registered)");
        }
    }

    private static void checkGeometry(List<Claim> claims) {
        Map<String, Claim> first = new HashMap<>();
        for (Claim claim : claims) {
            Claim seen = first.putIfAbsent(claim.layer(), claim);
            if (seen != null
                    && (seen.bytesPerBlock() != claim.bytesPerBlock() || seen.segments() != claim.segments())) {
                throw EngineException.invalidArgument("layer " + claim.layer()
                        + " registered with inconsistent geometry: bytes_per_block=" + seen.bytesPerBlock()
                        + " segments=" + seen.segments() + " vs bytes_per_block=" + claim.bytesPerBlock()
                        + " segments=" + claim.segments() + " on device " + claim.deviceId());
            }
        }
    }

    private static void checkOwners(Instance instance, List<Claim> claims) {
        int tpSize = instance.tpSize();
        Map<String, Claim[]> owners = new TreeMap<>(); // the first missing slot in name order, as upstream reports it
        for (Claim claim : claims) {
            Claim[] byRank = owners.computeIfAbsent(claim.layer(), k -> new Claim[tpSize]);
            Claim existing = byRank[claim.tpRank()];
            if (existing == null) {
                byRank[claim.tpRank()] = claim;
            } else if (existing.ppRank() != claim.ppRank()) {
                throw EngineException.invalidArgument("layer " + claim.layer()
                        + " claimed by different pipeline stages: device=" + existing.deviceId() + " pp_rank="
                        + existing.ppRank() + "; device=" + claim.deviceId() + " pp_rank=" + claim.ppRank()
                        + " tp_rank=" + claim.tpRank());
            }
        }
        for (Map.Entry<String, Claim[]> layer : owners.entrySet()) {
            Claim[] byRank = layer.getValue();
            for (int rank = 0; rank < tpSize; rank++) {
                if (byRank[rank] == null) {
                    throw EngineException.invalidArgument("instance " + instance.id()
                            + " has incomplete KV registration: layer " + layer.getKey() + " has no owner for tp_rank "
                            + rank
                            + " after all " + instance.worldSize() + " workers registered");
                }
            }
        }
    }
}
