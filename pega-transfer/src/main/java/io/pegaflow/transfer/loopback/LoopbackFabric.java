package io.pegaflow.transfer.loopback;

import io.pegaflow.kernel.memory.MemoryRegionInfo;
import io.pegaflow.transfer.HandshakeDescriptor;
import io.pegaflow.transfer.RegisteredRegion;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.lane.Fabric;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** The loopback data plane of one engine: its node in the in-JVM directory and one memcpy lane per connection. */
final class LoopbackFabric implements Fabric {
    private final TransferConfig config;
    private final LoopbackNode node;
    private final List<LoopbackLane> lanes;

    LoopbackFabric(TransferConfig config, List<MemoryRegionInfo> pool) {
        this.config = config;
        this.node = LoopbackNode.register(id -> regions(id, pool));
        List<LoopbackLane> made = new ArrayList<>(config.qpsPerPeer());
        for (int i = 0; i < config.qpsPerPeer(); i++) {
            made.add(new LoopbackLane(i, node));
        }
        this.lanes = List.copyOf(made);
    }

    static List<RegisteredRegion> regions(long nodeId, List<MemoryRegionInfo> pool) {
        List<MemoryRegionInfo> sorted = new ArrayList<>(pool);
        sorted.sort(Comparator.comparingLong(MemoryRegionInfo::address));
        List<RegisteredRegion> out = new ArrayList<>(sorted.size());
        for (int i = 0; i < sorted.size(); i++) {
            MemoryRegionInfo r = sorted.get(i);
            out.add(new RegisteredRegion(r.address(), r.lengthBytes(), LoopbackNode.regionToken(nodeId, i)));
        }
        return out;
    }

    LoopbackNode node() {
        return node;
    }

    @Override
    public HandshakeDescriptor.Fabric kind() {
        return HandshakeDescriptor.Fabric.LOOPBACK;
    }

    @Override
    public long instanceId() {
        return node.id;
    }

    @Override
    public List<String> nics() {
        return config.nics();
    }

    @Override
    public String transports() {
        return "";
    }

    @Override
    public List<RegisteredRegion> regions() {
        return node.regions;
    }

    @Override
    public List<LoopbackLane> lanes() {
        return lanes;
    }

    @Override
    public void release() {
        node.kill();
    }

    @Override
    public void abandon() {
        node.kill(); // nothing native to leak; peers must still stop touching the memory
    }
}
