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
 * Holds every actuator call that changes something ({@code POST /actuator/loggers/{name}} is the one exposed) to the
 * one {@link AdminAccess} rule the cleanup endpoints and the Shutdown RPC use; reads stay open for scrapers.
 */
@Component
class ActuatorMutationFilter extends OncePerRequestFilter {
    private static final Set<String> READS = Set.of("GET", "HEAD", "OPTIONS");

    // Looked up per call: filters are created with the web server, before the properties are bound and checked, and
    // a bad setting must fail at its own check, with its own one line, not while Tomcat starts.
    private final ObjectProvider<AdminAccess> access;

    ActuatorMutationFilter(ObjectProvider<AdminAccess> access) {
        this.access = access;
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        return !request.getRequestURI().startsWith("/actuator/") || READS.contains(request.getMethod());
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (access.getObject().permits(request)) {
            chain.doFilter(request, response);
            return;
        }
        response.setStatus(HttpStatus.FORBIDDEN.value());
        response.setContentType(MediaType.TEXT_PLAIN_VALUE);
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        response.getWriter().write(OperationsController.DENIED);
    }
}
