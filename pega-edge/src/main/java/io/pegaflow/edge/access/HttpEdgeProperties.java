package io.pegaflow.edge.access;

import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code pega.http.*}, read by both apps.
 *
 * @param allowedHosts host names (no ports) the HTTP port answers to besides {@code localhost}, IP literals and
 *     {@code server.address}: the names a reverse proxy forwards or operators type; {@code *} admits every name
 */
@ConfigurationProperties("pega.http")
public record HttpEdgeProperties(@DefaultValue List<String> allowedHosts) {}
