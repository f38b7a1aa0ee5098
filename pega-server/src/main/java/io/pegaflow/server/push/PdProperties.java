package io.pegaflow.server.push;

import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * The P/D push engine under {@code pega.pd.*} (docs/pd-push.md), off unless {@code enabled}.
 *
 * @param enabled serve {@code pegaflow.ext.PdPush} and run the push engine
 * @param nics devices of the push engine's own UCX context ({@code pega.rdma.nics} syntax)
 * @param transports UCX transport list; empty lets UCX choose
 * @param lanes connections per peer; equal on every server
 * @param advertiseAddress host:port decode handshakes name; empty means 127.0.0.1 and the bound gRPC port
 * @param maxRequestsPerPrincipal one principal's share of {@code max-requests}; 0 means half of it
 * @param shmPool with transports that allow shared memory and no shared-memory pool of {@code pega.rdma.*}, let the
 *     push engine's UCX context allocate the pool's shards, so pushes between servers of one host are copies into the
 *     attached segment instead of emulated puts (decision 0019)
 */
@Validated
@ConfigurationProperties("pega.pd")
public record PdProperties(
        @DefaultValue("false") boolean enabled,
        @NotNull @DefaultValue("lo") String nics,
        @NotNull @DefaultValue("") String transports,
        @Min(1) @DefaultValue("2") int lanes,
        @NotNull @DefaultValue("") String advertiseAddress,
        @NotNull @DefaultValue("30s") Duration pushTimeout,
        @NotNull @DefaultValue("60s") Duration receiveTimeout,
        @NotNull @DefaultValue("10s") Duration connectTimeout,
        @NotNull @DefaultValue("5s") Duration rpcTimeout,
        @NotNull @DefaultValue("30s") Duration quarantine,
        @Min(1) @DefaultValue("64") int maxInflightLayers,
        @Min(1) @DefaultValue("256") int maxRequests,
        @Min(0) @DefaultValue("0") int maxRequestsPerPrincipal,
        @NotNull @DefaultValue("4MB") DataSize putChunk,
        @DefaultValue("true") boolean shmPool) {}
