package io.pegaflow.server.internode;

import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * {@code pega.metaserver.*} on the server side: where the cluster index runs and how this node announces itself
 * (reference flags {@code --metaserver-addr}, {@code --metaserver-queue-depth}). Nothing is announced unless
 * {@code addr} is set.
 *
 * @param addr the metaserver, {@code host:port} or {@code http://host:port} (reference {@code --metaserver-addr}),
 *     or several separated by commas: instances sharing one database, failed over in order when one is unreachable;
 *     empty disables the client
 * @param queueDepth pending announcement batches (one slot holds one sealed or evicted batch, not one hash); a full
 *     queue drops the batch and counts it, so Save never waits for the metaserver
 * @param heartbeatInterval heartbeat period; empty follows the metaserver: half of its {@code stale_after_secs},
 *     at least 1 s (15 s with the default 30 s)
 * @param advertiseAddr this node's gRPC address as peers reach it ({@code ip:port}); empty uses
 *     {@code spring.grpc.server.host}:{@code spring.grpc.server.port}. Loopback and unspecified addresses are refused
 * @param allowLoopback accept a loopback advertise address (single-host tests only); 0.0.0.0 is never accepted
 * @param rpcTimeout deadline of every metaserver call (the reference has none, so a hung metaserver stalls it)
 * @param batchSize most hashes per Insert/Remove call; larger batches and re-announcements are split
 */
@Validated
@ConfigurationProperties("pega.metaserver")
public record MetaserverClientProperties(
        @Nullable String addr,
        @Min(1) @DefaultValue("256") int queueDepth,
        @Nullable Duration heartbeatInterval,
        @Nullable String advertiseAddr,
        @DefaultValue("false") boolean allowLoopback,
        @NotNull @DefaultValue("5s") Duration rpcTimeout,
        @Min(1) @DefaultValue("1024") int batchSize) {}
