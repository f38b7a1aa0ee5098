package io.pegaflow.it.p2p;

import io.pegaflow.it.net.Site;
import java.util.List;

/** The two nodes on this host's loopback: the variant every machine runs, namespaces or not. */
class P2pLoopbackIT extends P2pClusterContract {
    @Override
    List<Site> sites() {
        return List.of(Site.loopback("a"), Site.loopback("b"));
    }
}
