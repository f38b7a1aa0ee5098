package io.pegaflow.edge.access;

import jakarta.servlet.http.HttpServletRequest;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The one rule for mutating operations (the Shutdown RPC, the HTTP cleanup endpoints, actuator mutations, and whatever
 * an admin API adds): a caller is admitted when it presents {@code Bearer <token>} and a token is configured, or when
 * its <em>socket peer</em> is on this host <em>and</em> it came through a listener bound to loopback only (or through
 * an in-process or Unix-domain transport). A listener bound to any other address (0.0.0.0 by default for HTTP) admits
 * no one without the token, local peers included (decision 0011): a pod that shares the node, a sidecar or a reverse
 * proxy on the host all look local. Without a token such a listener refuses every mutation, and the refusal says how to
 * enable them. The reference admitted anyone.
 *
 * <p>The peer is the address of the connection itself, never a value from {@code X-Forwarded-For} or
 * {@code Forwarded}: Spring Boot trusts those headers from private ranges when it detects Kubernetes, and any pod
 * could then claim to be 127.0.0.1. For HTTP the peer and the listener come from {@link SocketPeerValve}, for gRPC from
 * {@link AdminCallerInterceptor}; a request that passed neither is treated as remote. The token is compared in
 * constant time (as SHA-256 digests, so not even its length leaks). Immutable and thread-safe.
 */
public final class AdminAccess {

    private static final Pattern IPV4_LITERAL = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
    private static final String BEARER = "Bearer ";

    /** The digest of {@code Bearer <token>}; null when no token is configured. */
    private final byte @Nullable [] expected;

    /** @param token the admin bearer token; empty means no token: only local callers are admitted */
    public AdminAccess(String token) {
        this.expected = token.isEmpty() ? null : sha256(BEARER + token);
    }

    /** Whether a token is configured, i.e. remote callers can be admitted at all. */
    public boolean tokenConfigured() {
        return expected != null;
    }

    /**
     * The rule itself.
     *
     * @param peer the connection's remote address; {@code null} (unknown) counts as remote
     * @param loopbackListener whether the connection came through a listener bound to a loopback address only
     * @param authorization the caller's {@code Authorization} value, or {@code null}
     */
    public boolean permits(@Nullable SocketAddress peer, boolean loopbackListener, @Nullable String authorization) {
        return presentsToken(authorization)
                || (isLocal(peer) && (loopbackListener || !(peer instanceof InetSocketAddress)));
    }

    /** The rule for the gRPC call being served; needs {@link AdminCallerInterceptor} on the server. */
    public boolean permitsCurrentGrpcCall() {
        return permits(
                AdminCallerInterceptor.PEER.get(),
                Boolean.TRUE.equals(AdminCallerInterceptor.LOOPBACK_LISTENER.get()),
                AdminCallerInterceptor.AUTHORIZATION.get());
    }

    /** The rule for an HTTP request; needs {@link SocketPeerValve} in the Tomcat engine. */
    public boolean permits(HttpServletRequest request) {
        return permits(
                peer(request),
                Boolean.TRUE.equals(request.getAttribute(SocketPeerValve.LOOPBACK_LISTENER)),
                request.getHeader("Authorization"));
    }

    /**
     * The rule for <em>reading</em> the admin views over HTTP: the token, or a caller on this host whatever listener it
     * came through. Looser than the mutation rule on purpose: a listener on all interfaces (the default, so Prometheus
     * can scrape) still shows the dashboard to a browser on the host or through an SSH tunnel, while the pod network
     * needs the token; a caller that only looks local (a reverse proxy on the host) can read, never change anything.
     */
    public boolean permitsRead(HttpServletRequest request) {
        return permits(peer(request), true, request.getHeader("Authorization"));
    }

    private static @Nullable SocketAddress peer(HttpServletRequest request) {
        Object peer = request.getAttribute(SocketPeerValve.ATTRIBUTE);
        InetAddress address = peer instanceof String literal ? literal(literal) : null;
        return address == null ? null : new InetSocketAddress(address, 0);
    }

    /** Whether a configured bind host ({@code spring.grpc.server.host}, {@code server.address}) is loopback only. */
    public static boolean isLoopbackBind(@Nullable String host) {
        if (host == null) {
            return false;
        }
        if (host.equalsIgnoreCase("localhost")) {
            return true;
        }
        InetAddress address = literal(host);
        return address != null && address.isLoopbackAddress();
    }

    private boolean presentsToken(@Nullable String authorization) {
        return expected != null && authorization != null && MessageDigest.isEqual(expected, sha256(authorization));
    }

    /** Loopback, or a transport that cannot leave the host (in-process, Unix domain). */
    static boolean isLocal(@Nullable SocketAddress peer) {
        if (peer instanceof InetSocketAddress inet) {
            InetAddress a = inet.getAddress();
            return a != null && a.isLoopbackAddress();
        }
        return peer != null;
    }

    /** A numeric address as Tomcat reports the peer; anything else (a host name) is not resolved. */
    static @Nullable InetAddress literal(String text) {
        if (!text.contains(":") && !IPV4_LITERAL.matcher(text).matches()) {
            return null;
        }
        try {
            return InetAddress.getByName(text);
        } catch (UnknownHostException e) {
            return null;
        }
    }

    private static byte[] sha256(String value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM provides SHA-256", e);
        }
    }
}
