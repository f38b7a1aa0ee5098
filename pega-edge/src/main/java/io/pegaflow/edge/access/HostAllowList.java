package io.pegaflow.edge.access;

import java.util.Collection;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The names the HTTP port answers to, against DNS rebinding (M3): a page on {@code rebind.attacker.example} whose
 * name is re-pointed at 127.0.0.1 talks to this port as a same-origin page, but its requests still carry
 * {@code Host: rebind.attacker.example}. Admitted: {@code localhost}, every IP literal (a rebinding needs a name the
 * attacker owns, and Kubernetes probes and Prometheus address a pod by its IP), the name {@code server.address} was
 * given, and the names in {@code pega.http.allowed-hosts}; {@code *} there admits every name. The port is not judged.
 * A request without a Host header (HTTP/1.0; never a browser) passes. Immutable and thread-safe.
 */
public final class HostAllowList {

    /** The value of {@code pega.http.allowed-hosts} that turns the check off. */
    public static final String ANY = "*";

    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

    private final Set<String> names;
    private final boolean any;

    /**
     * @param configured {@code pega.http.allowed-hosts}: host names, without ports
     * @param boundAddress {@code server.address}, or null when unset
     */
    public HostAllowList(Collection<String> configured, @Nullable String boundAddress) {
        this.any = configured.stream().anyMatch(ANY::equals);
        Set<String> all = configured.stream().map(HostAllowList::normalize).collect(Collectors.toSet());
        all.add("localhost");
        if (boundAddress != null && !boundAddress.isBlank()) {
            all.add(normalize(boundAddress));
        }
        this.names = Set.copyOf(all);
    }

    /** Whether {@code *} turned the check off. */
    public boolean admitsAny() {
        return any;
    }

    /**
     * Whether a request naming {@code host} may be answered.
     *
     * @param host the request's {@code Host} header, or null
     */
    public boolean permits(@Nullable String host) {
        if (any || host == null || host.isEmpty()) {
            return true;
        }
        String name = hostPart(host);
        return name.startsWith("[") || IPV4.matcher(name).matches() || names.contains(name);
    }

    /** The host of a {@code Host} header or authority, lower case, without its port or a trailing dot. */
    static String hostPart(String authority) {
        String host = authority.trim();
        if (host.startsWith("[")) {
            int end = host.indexOf(']');
            return end < 0
                    ? host.toLowerCase(Locale.ROOT)
                    : host.substring(0, end + 1).toLowerCase(Locale.ROOT);
        }
        int colon = host.lastIndexOf(':');
        if (colon >= 0 && host.indexOf(':') == colon) {
            host = host.substring(0, colon);
        }
        return normalize(host);
    }

    private static String normalize(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        if (n.contains(":") && !n.startsWith("[")) {
            n = "[" + n + "]"; // a bare IPv6 address as server.address writes it
        }
        return n.endsWith(".") ? n.substring(0, n.length() - 1) : n;
    }
}
