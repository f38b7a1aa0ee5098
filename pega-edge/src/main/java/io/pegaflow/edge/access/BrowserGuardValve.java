package io.pegaflow.edge.access;

import io.pegaflow.edge.log.LogSafe;
import jakarta.servlet.ServletException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;
import org.apache.coyote.ActionCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps web pages from driving the HTTP port (H5, M3): every request must name an allowed host
 * ({@link HostAllowList}, against DNS rebinding), and a mutation must pass {@link CrossSiteRule} (against CSRF). Both
 * apps install it between {@link SocketPeerValve} and {@link AdmissionValve}, so it judges before any servlet, the
 * admin UI's static files and the actuator included, and before a body is read. A refusal is a 403 with a one-line
 * text reason and a closed connection; it is logged at WARN once per kind of refusal per minute (a page can send
 * thousands), with the offending value escaped.
 */
public final class BrowserGuardValve extends ValveBase {
    private static final Logger LOG = LoggerFactory.getLogger(BrowserGuardValve.class);
    private static final long LOG_INTERVAL_MILLIS = 60_000;

    private final HostAllowList hosts;
    private final Clock clock;
    private final Map<String, Long> lastLogged = new ConcurrentHashMap<>();

    public BrowserGuardValve(HostAllowList hosts, Clock clock) {
        super(true);
        this.hosts = hosts;
        this.clock = clock;
    }

    @Override
    public void invoke(Request request, Response response) throws IOException, ServletException {
        String host = request.getHeader("Host");
        CrossSiteRule.Refusal refusal = hosts.permits(host)
                ? CrossSiteRule.judge(
                        request.getMethod(),
                        host,
                        request.getHeader("Origin"),
                        request.getHeader("Sec-Fetch-Site"),
                        request.getHeader("Content-Type"),
                        request.getHeader(CrossSiteRule.MARKER),
                        request.getHeader("Authorization"))
                : new CrossSiteRule.Refusal(
                        "host",
                        "Host " + host + " is not a name of this server; add it to pega.http.allowed-hosts",
                        String.valueOf(host));
        if (refusal == null) {
            getNext().invoke(request, response);
            return;
        }
        logOnce(refusal, request);
        // As AdmissionValve: no body is read or swallowed for a refused request.
        request.getCoyoteRequest().action(ActionCode.DISABLE_SWALLOW_INPUT, null);
        response.setStatus(403);
        response.setHeader("Connection", "close");
        response.setContentType("text/plain");
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        response.getWriter().write(LogSafe.of(refusal.message()));
    }

    private void logOnce(CrossSiteRule.Refusal refusal, Request request) {
        if (firstInInterval(refusal.kind())) {
            LOG.warn(
                    "refused {} {} from {}: {} (logged once a minute per kind of refusal)",
                    LogSafe.of(request.getMethod()),
                    LogSafe.of(request.getRequestURI()),
                    request.getPeerAddr(),
                    LogSafe.of(refusal.message()));
        }
    }

    /** Whether a refusal of this kind is the first in its minute; exactly one caller wins a race for it. */
    boolean firstInInterval(String kind) {
        long now = clock.millis();
        Long last = lastLogged.get(kind);
        if (last != null && now - last < LOG_INTERVAL_MILLIS) {
            return false;
        }
        return last == null ? lastLogged.putIfAbsent(kind, now) == null : lastLogged.replace(kind, last, now);
    }
}
