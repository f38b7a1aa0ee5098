package io.pegaflow.edge.access;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A mutation (any method but GET, HEAD and OPTIONS) must not come from another site's page (H5, CSRF): a form or a
 * {@code fetch(..., {mode: 'no-cors'})} on any page the operator opens reaches a loopback listener, and the admin rule
 * admits it because its socket peer is local. Three checks, each enough to stop today's browsers, together enough for
 * old ones and proxies that drop a header:
 *
 * <ol>
 *   <li>{@code Sec-Fetch-Site}, when present, is {@code same-origin} or {@code none} ({@code cross-site} and
 *       {@code same-site} are refused: another port of localhost is the same site);
 *   <li>{@code Origin}, when present, names this request's own {@code Host} (scheme aside: a TLS-terminating proxy
 *       forwards {@code https} origins to a plain listener); {@code Origin: null} is refused;
 *   <li>the request is not one a page can send without a CORS preflight: it carries {@link #MARKER} (any value), or a
 *       JSON body ({@code Content-Type: application/json}), or a bearer token. The server answers no preflight, so a
 *       page of another origin can send none of these. This is what stops a browser that sends neither header.
 * </ol>
 *
 * Non-browser clients (curl, scripts) send neither header and pass with the marker. Stateless and thread-safe.
 */
public final class CrossSiteRule {

    /** The header that makes a mutation non-simple; the dashboard and the documented commands send it. */
    public static final String MARKER = "X-Pega-Request";

    private static final Set<String> READS = Set.of("GET", "HEAD", "OPTIONS");

    private CrossSiteRule() {}

    /** Whether {@code method} only reads. */
    public static boolean isRead(String method) {
        return READS.contains(method);
    }

    /**
     * Why the request is refused, or null when it may go on (reads always may).
     *
     * @param host the {@code Host} header, or null
     */
    public static @Nullable Refusal judge(
            String method,
            @Nullable String host,
            @Nullable String origin,
            @Nullable String fetchSite,
            @Nullable String contentType,
            @Nullable String marker,
            @Nullable String authorization) {
        if (isRead(method)) {
            return null;
        }
        if (fetchSite != null) {
            String site = fetchSite.trim().toLowerCase(Locale.ROOT);
            if (!site.equals("same-origin") && !site.equals("none")) {
                return new Refusal(
                        "sec-fetch-site", "cross-site request refused (Sec-Fetch-Site: " + fetchSite + ")", fetchSite);
            }
        }
        if (origin != null && !sameOrigin(origin, host)) {
            return new Refusal(
                    "origin",
                    "cross-origin request refused: Origin " + origin + " is not this server (Host " + host + ")",
                    origin);
        }
        if (!nonSimple(contentType, marker, authorization)) {
            return new Refusal(
                    "marker",
                    "mutations need the header '" + MARKER + ": 1' (or a JSON body, or a bearer token), which a"
                            + " page of another site cannot send",
                    method);
        }
        return null;
    }

    /** A refusal: its kind (logged once per kind), the text the caller gets, and the value that failed. */
    public record Refusal(String kind, String message, String value) {}

    private static boolean nonSimple(
            @Nullable String contentType, @Nullable String marker, @Nullable String authorization) {
        if (marker != null && !marker.isBlank()) {
            return true;
        }
        if (authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return true;
        }
        if (contentType == null) {
            return false;
        }
        int semicolon = contentType.indexOf(';');
        String media = (semicolon < 0 ? contentType : contentType.substring(0, semicolon)).trim();
        return media.equalsIgnoreCase("application/json");
    }

    /** Whether {@code origin} ({@code scheme://host[:port]}) names the server the {@code Host} header names. */
    static boolean sameOrigin(String origin, @Nullable String host) {
        if (host == null) {
            return false;
        }
        URI uri;
        try {
            uri = new URI(origin.trim());
        } catch (URISyntaxException e) {
            return false;
        }
        String scheme = uri.getScheme();
        String originHost = uri.getHost();
        if (scheme == null || originHost == null) {
            return false; // "null", file:, opaque origins
        }
        int defaultPort = scheme.equalsIgnoreCase("https") ? 443 : scheme.equalsIgnoreCase("http") ? 80 : -1;
        int originPort = uri.getPort() < 0 ? defaultPort : uri.getPort();
        String hostName = HostAllowList.hostPart(host);
        if (!hostName.equals(HostAllowList.hostPart(originHost))) {
            return false;
        }
        int hostPort = port(host);
        // Host without a port: the default port of whichever scheme the browser used (a proxy may have ended TLS)
        return hostPort < 0 ? originPort == 80 || originPort == 443 : hostPort == originPort;
    }

    private static int port(String host) {
        String h = host.trim();
        int colon = h.lastIndexOf(':');
        if (colon < 0 || colon < h.lastIndexOf(']') || (!h.startsWith("[") && h.indexOf(':') != colon)) {
            return -1;
        }
        try {
            return Integer.parseInt(h.substring(colon + 1));
        } catch (NumberFormatException e) {
            return -2; // never equal to a port
        }
    }
}
