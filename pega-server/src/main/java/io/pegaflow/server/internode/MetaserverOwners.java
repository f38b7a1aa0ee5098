package io.pegaflow.server.internode;

import io.pegaflow.node.remote.RemoteFetchTier;
import io.pegaflow.proto.NodePrefixResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The remote tier's owner directory: the metaserver's {@code QueryPrefixBlocks}, each call under {@code timeout}. */
public final class MetaserverOwners implements RemoteFetchTier.OwnerDirectory {
    private final MetaserverClient metaserver;
    private final Duration timeout;

    public MetaserverOwners(MetaserverClient metaserver, Duration timeout) {
        this.metaserver = metaserver;
        this.timeout = timeout;
    }

    @Override
    public List<RemoteFetchTier.Owner> owners(String namespace, List<byte[]> hashes) {
        List<NodePrefixResult> nodes = metaserver.queryPrefix(namespace, hashes, timeout);
        List<RemoteFetchTier.Owner> out = new ArrayList<>(nodes.size());
        for (NodePrefixResult n : nodes) {
            out.add(new RemoteFetchTier.Owner(
                    n.getNode(), (int) Math.min(Integer.toUnsignedLong(n.getPrefixLen()), Integer.MAX_VALUE)));
        }
        return out;
    }
}
