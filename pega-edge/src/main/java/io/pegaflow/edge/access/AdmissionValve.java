package io.pegaflow.edge.access;

import jakarta.servlet.ServletException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;
import org.apache.coyote.ActionCode;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Authorises a request <em>before anything reads its body</em> (decision 0011, defect 7). A request that would change
 * something (any method but GET, HEAD, OPTIONS) or that carries a body, from a caller the app's {@link AdminAccess}
 * does not admit, is answered 403 at once: the body is never read, Tomcat is told not to swallow it, and the connection
 * is closed. Without this, ~200 remote POSTs trickling a form body one byte every 5 s held every Tomcat worker (Spring
 * parsed the form for {@code @RequestParam} before the controller checked the token) and starved {@code /health},
 * {@code /metrics} and the liveness probe.
 *
 * <p>Reads without a body pass untouched, whoever sends them. An app without an {@link AdminAccess} bean (it has no
 * mutating HTTP operation) has nothing to gate. Runs after {@link SocketPeerValve}, whose peer it judges.
 */
public final class AdmissionValve extends ValveBase {

    /** The refusal's text, also the controllers' own (they check again). */
    public static final String DENIED = "mutating endpoints need 'Authorization: Bearer <pega.admin.token>' unless the"
            + " HTTP listener is loopback-only (server.address=127.0.0.1); with no pega.admin.token set they are"
            + " disabled on this listener";

    private static final Set<String> READS = Set.of("GET", "HEAD", "OPTIONS");

    // Looked up per request: valves exist before the properties are bound and checked.
    private final ObjectProvider<AdminAccess> access;

    public AdmissionValve(ObjectProvider<AdminAccess> access) {
        super(true);
        this.access = access;
    }

    @Override
    public void invoke(Request request, Response response) throws IOException, ServletException {
        AdminAccess rule = access.getIfAvailable();
        if (rule == null || (READS.contains(request.getMethod()) && !carriesBody(request)) || rule.permits(request)) {
            getNext().invoke(request, response);
            return;
        }
        // Do not read, do not swallow: a refused caller must not hold a worker for as long as it trickles a body.
        request.getCoyoteRequest().action(ActionCode.DISABLE_SWALLOW_INPUT, null);
        response.setStatus(403);
        response.setHeader("Connection", "close");
        response.setContentType("text/plain");
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        response.getWriter().write(DENIED);
    }

    private static boolean carriesBody(Request request) {
        return request.getContentLengthLong() > 0 || request.getHeader("Transfer-Encoding") != null;
    }
}
