package io.pegaflow.server.internode;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** Parsing and checks of the two addresses the client needs: the metaserver's and the one this node advertises. */
final class Addresses {

    private Addresses() {}

    /**
     * The gRPC targets for {@code pega.metaserver.addr}: one address, or several separated by commas (instances over
     * one database, failed over in order), each as {@link #metaserverTarget}; returned joined by commas.
     */
    static String metaserverTargets(String addr) {
        List<String> targets = new ArrayList<>();
        for (String part : addr.split(",", -1)) {
            if (part.isBlank()) {
                throw new IllegalArgumentException("pega.metaserver.addr: " + addr
                        + " (expected: host:port, or several separated by commas, without empty entries)");
            }
            targets.add(metaserverTarget(part));
        }
        return String.join(",", targets);
    }

    /**
     * The gRPC target for one address of {@code pega.metaserver.addr}: {@code host:port}, {@code http://host:port} (the reference's
     * URI form) or a gRPC target such as {@code dns:///host:port}.
     */
    static String metaserverTarget(String addr) {
        String value = addr.trim();
        if (value.regionMatches(true, 0, "https://", 0, 8)) {
            throw new IllegalArgumentException("pega.metaserver.addr: " + addr
                    + " (expected: http://host:port or host:port; TLS is not supported)");
        }
        if (value.regionMatches(true, 0, "http://", 0, 7)) {
            value = value.substring(7);
        }
        if (value.endsWith("/")) {
            value = value.substring(0, value.length() - 1);
        }
        if (!value.contains("://") && !hasPort(value)) {
            throw new IllegalArgumentException(
                    "pega.metaserver.addr: " + addr + " (expected: host:port, e.g. http://10.0.0.100:50056)");
        }
        return value;
    }

    /**
     * Checks the address announced to the metaserver, which is also what peers dial and the RDMA requester id: a
     * wildcard can never be dialled, and loopback only works when every node runs on one host.
     */
    static String checkAdvertise(String advertise, boolean allowLoopback) {
        String source = "pega.metaserver.advertise-addr: " + advertise;
        if (!hasPort(advertise)) {
            throw new IllegalArgumentException(source + " (expected: this node's reachable ip:port)");
        }
        int colon = advertise.lastIndexOf(':');
        String host = advertise.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (Integer.parseInt(advertise.substring(colon + 1)) == 0) {
            throw new IllegalArgumentException(
                    source
                            + " (expected: a fixed port; the gRPC port is chosen at start, so set pega.metaserver.advertise-addr)");
        }
        InetAddress literal = literal(host);
        if (literal != null && literal.isAnyLocalAddress()) {
            throw new IllegalArgumentException(source + " (expected: a routable ip:port; peers cannot dial a wildcard"
                    + " address, set pega.metaserver.advertise-addr to this node's IP)");
        }
        boolean loopback =
                host.toLowerCase(Locale.ROOT).equals("localhost") || (literal != null && literal.isLoopbackAddress());
        if (loopback && !allowLoopback) {
            throw new IllegalArgumentException(source + " (expected: a routable ip:port; other nodes cannot reach"
                    + " loopback. Set pega.metaserver.advertise-addr, or pega.metaserver.allow-loopback=true for a"
                    + " single-host test)");
        }
        return advertise;
    }

    private static boolean hasPort(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0 || colon == hostPort.length() - 1) {
            return false;
        }
        String port = hostPort.substring(colon + 1);
        if (port.length() > 5 || !port.chars().allMatch(Character::isDigit)) {
            return false;
        }
        return Integer.parseInt(port) <= 65535;
    }

    /** The address if {@code host} is an IP literal, else null (names are not resolved here). */
    private static @Nullable InetAddress literal(String host) {
        boolean ipLike = host.contains(":") || host.chars().allMatch(c -> Character.isDigit(c) || c == '.');
        if (!ipLike) {
            return null;
        }
        try {
            return InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            return null;
        }
    }
}
