package io.pegaflow.edge.access;

import jakarta.servlet.ServletException;
import java.io.IOException;
import java.net.InetAddress;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;
import org.apache.coyote.AbstractProtocol;
import org.jspecify.annotations.Nullable;

/**
 * Records the address of the TCP peer of every HTTP request as the request attribute {@link #ATTRIBUTE}, before any
 * servlet code runs. Tomcat's {@code getPeerAddr()} is the connection's own address, which {@code RemoteIpValve}
 * (Spring Boot's {@code server.forward-headers-strategy=native}, the default on Kubernetes) leaves alone while it
 * rewrites {@code getRemoteAddr()} from {@code X-Forwarded-For}. Also records whether the connector is bound to a
 * loopback address only ({@link #LOOPBACK_LISTENER}). Clients cannot set request attributes.
 */
public final class SocketPeerValve extends ValveBase {

    /** The request attribute holding the peer's numeric address as a {@code String}. */
    public static final String ATTRIBUTE = "io.pegaflow.edge.access.socket-peer";

    /** The request attribute telling whether the request's connector is bound to a loopback address only. */
    public static final String LOOPBACK_LISTENER = "io.pegaflow.edge.access.loopback-listener";

    public SocketPeerValve() {
        super(true);
    }

    /** The connector's bind address is a loopback one; {@code null} (all interfaces) is not. */
    static boolean loopbackOnly(@Nullable Connector connector) {
        if (connector != null && connector.getProtocolHandler() instanceof AbstractProtocol<?> protocol) {
            InetAddress address = protocol.getAddress();
            return address != null && address.isLoopbackAddress();
        }
        return false;
    }

    @Override
    public void invoke(Request request, Response response) throws IOException, ServletException {
        request.setAttribute(ATTRIBUTE, request.getPeerAddr());
        request.setAttribute(LOOPBACK_LISTENER, loopbackOnly(request.getConnector()));
        getNext().invoke(request, response);
    }
}
