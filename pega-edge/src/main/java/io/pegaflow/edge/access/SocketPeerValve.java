package io.pegaflow.edge.access;

import jakarta.servlet.ServletException;
import java.io.IOException;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;

/**
 * Records the address of the TCP peer of every HTTP request as the request attribute {@link #ATTRIBUTE}, before any
 * servlet code runs. Tomcat's {@code getPeerAddr()} is the connection's own address, which {@code RemoteIpValve}
 * (Spring Boot's {@code server.forward-headers-strategy=native}, the default on Kubernetes) leaves alone while it
 * rewrites {@code getRemoteAddr()} from {@code X-Forwarded-For}. Clients cannot set request attributes.
 */
public final class SocketPeerValve extends ValveBase {

    /** The request attribute holding the peer's numeric address as a {@code String}. */
    public static final String ATTRIBUTE = "io.pegaflow.edge.access.socket-peer";

    public SocketPeerValve() {
        super(true);
    }

    @Override
    public void invoke(Request request, Response response) throws IOException, ServletException {
        request.setAttribute(ATTRIBUTE, request.getPeerAddr());
        getNext().invoke(request, response);
    }
}
