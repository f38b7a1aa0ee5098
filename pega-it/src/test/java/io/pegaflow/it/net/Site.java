package io.pegaflow.it.net;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Where a test's process runs and how the test reaches it: the root namespace's loopback (every machine), or one
 * side of a {@link NamespacePair} (a real network stack between the two sides, where namespaces are allowed).
 *
 * <p>A site gives the address its processes bind to and peers dial ({@link #address()}), the network device UCX is
 * to use ({@link #device()}), the command prefix that runs a process there ({@link #wrapper()}), and
 * {@link #dial(String, int)}: a port on this JVM's 127.0.0.1 that connects to {@code host:port} as a process of the
 * site would, through a {@link NamespaceTunnel} for a namespace. The site owns those tunnels and closes them.
 */
public final class Site implements AutoCloseable {
    private final String name;
    private final String address;
    private final String device;
    private final String namespace;
    private final List<NamespaceTunnel> tunnels = new ArrayList<>();

    private Site(String name, String address, String device, String namespace) {
        this.name = name;
        this.address = address;
        this.device = device;
        this.namespace = namespace;
    }

    /** Processes on 127.0.0.1 of this host, UCX on {@code lo}. */
    public static Site loopback(String name) {
        return new Site(name, "127.0.0.1", "lo", "");
    }

    /** Side a of the pair: its processes run inside namespace a and bind {@link NamespacePair#ADDRESS_A}. */
    public static Site sideA(NamespacePair pair) {
        return new Site("a", NamespacePair.ADDRESS_A, pair.deviceA(), pair.namespaceA());
    }

    /** Side b of the pair. */
    public static Site sideB(NamespacePair pair) {
        return new Site("b", NamespacePair.ADDRESS_B, pair.deviceB(), pair.namespaceB());
    }

    public String name() {
        return name;
    }

    public String address() {
        return address;
    }

    public String device() {
        return device;
    }

    public boolean isLoopback() {
        return namespace.isEmpty();
    }

    public List<String> wrapper() {
        return isLoopback() ? List.of() : NamespacePair.execIn(namespace);
    }

    /** The environment that keeps UCX's TCP transport on this site's device. */
    public Map<String, String> ucxTcpEnvironment() {
        return Map.of("UCX_TLS", "tcp", "UCX_NET_DEVICES", device);
    }

    /** A port on this JVM's 127.0.0.1 that reaches {@code host:port} from this site. */
    public synchronized int dial(String host, int port) throws IOException {
        if (isLoopback()) {
            if (!host.equals(address)) {
                throw new IllegalArgumentException("a loopback site reaches only " + address + ", not " + host);
            }
            return port;
        }
        NamespaceTunnel tunnel = NamespaceTunnel.open(namespace, host, port);
        tunnels.add(tunnel);
        return tunnel.localPort();
    }

    @Override
    public synchronized void close() {
        tunnels.forEach(NamespaceTunnel::close);
        tunnels.clear();
    }

    @Override
    public String toString() {
        return isLoopback() ? name + "@loopback" : name + "@" + namespace + "(" + address + ", " + device + ")";
    }
}
