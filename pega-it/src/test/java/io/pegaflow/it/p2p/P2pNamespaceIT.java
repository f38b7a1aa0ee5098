package io.pegaflow.it.p2p;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pegaflow.it.net.NamespacePair;
import io.pegaflow.it.net.Site;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The two nodes in two network namespaces joined by a veth pair, each on its own non-loopback address: everything
 * between them crosses a real network stack. Skipped, with the reason, where this process may not make namespaces.
 */
class P2pNamespaceIT extends P2pClusterContract {
    private NamespacePair pair;

    @Override
    List<Site> sites() {
        Optional<String> why = NamespacePair.unavailable();
        assumeTrue(why.isEmpty(), () -> "network namespaces unavailable, two-namespace tests skipped: " + why.get());
        List<String> leftovers = NamespacePair.removeLeftovers();
        if (!leftovers.isEmpty()) {
            System.out.println("removed network namespaces of an earlier run: " + leftovers);
        }
        pair = NamespacePair.create();
        return List.of(Site.sideA(pair), Site.sideB(pair));
    }

    @Override
    void afterCluster() {
        if (pair != null) {
            pair.close();
        }
    }

    @Test
    void shouldReachTheOtherNodeOnlyThroughTheVeth() throws IOException {
        TwoNodeCluster.Node a = cluster.a();
        Site b = cluster.b().site();
        assertThat(a.site().address()).isNotEqualTo(b.address()).doesNotStartWith("127.");
        // Node a listens on its veth address only, and node b's namespace has a loopback of its own: a's port there
        // answers nothing, so the calls that succeed went over the veth.
        assertUnreachable(b.dial("127.0.0.1", a.grpcPort()));
    }
}
