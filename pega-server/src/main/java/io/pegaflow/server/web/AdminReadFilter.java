package io.pegaflow.server.web;

import io.pegaflow.edge.access.AdminAccess;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The one read policy for the operator views that name peers, requests and instances: {@code GET /transfer},
 * {@code GET /pd} and the admin API {@code /api/admin/*} are served to the callers {@link AdminAccess#permitsRead}
 * admits (a caller on this host, or {@code Authorization: Bearer <pega.admin.token>}) and refused with {@code 403} and
 * {@link #DENIED} otherwise. The controllers behind these paths check nothing themselves.
 *
 * <p>Two documents of the admin API stay open, since the dashboard needs them before it has a token and they name no
 * peer, instance or request: {@code /api/admin/info} (which app, which subsystems) and {@code /api/admin/access}
 * (whether this caller would be admitted, and how to enable it).
 */
@Component
class AdminReadFilter extends OncePerRequestFilter {
    /** The refusal's text: what would admit the caller. */
    static final String DENIED = "the admin views (/transfer, /pd, /api/admin/*) are served to callers on this host"
            + " and to 'Authorization: Bearer <pega.admin.token>'; with no pega.admin.token set, only on this host (an"
            + " SSH tunnel to the HTTP port counts)";

    private static final String ADMIN_API = "/api/admin/";
    private static final Set<String> GUARDED = Set.of("/transfer", "/pd");
    private static final Set<String> OPEN = Set.of(ADMIN_API + "info", ADMIN_API + "access");

    // Looked up per call, as in ActuatorMutationFilter: filters exist before the properties are bound and checked.
    private final ObjectProvider<AdminAccess> access;

    AdminReadFilter(ObjectProvider<AdminAccess> access) {
        this.access = access;
    }

    /** Whether {@code path} (the servlet path: decoded, dot segments resolved, no path parameters) is guarded. */
    static boolean guards(String path) {
        if (GUARDED.contains(path)) {
            return true;
        }
        return path.startsWith(ADMIN_API) && !OPEN.contains(path);
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        return !guards(request.getServletPath());
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (access.getObject().permitsRead(request)) {
            chain.doFilter(request, response);
            return;
        }
        response.setStatus(HttpStatus.FORBIDDEN.value());
        response.setContentType(MediaType.TEXT_PLAIN_VALUE);
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        response.getWriter().write(DENIED);
    }
}
