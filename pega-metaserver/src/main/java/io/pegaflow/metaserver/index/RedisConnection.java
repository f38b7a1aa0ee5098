package io.pegaflow.metaserver.index;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions.RefreshTrigger;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One Lettuce connection to a single Redis server or to a Redis Cluster, with binary keys and values. Both expose the
 * same asynchronous commands; in a cluster Lettuce routes each command by its key's slot, splits the multi-key ones
 * the index uses ({@code EXISTS}, {@code DBSIZE}) over the masters, and refreshes the topology when a master fails, so
 * a promoted replica takes its slots' traffic. Owns its client resources; {@link #close()} releases them once.
 */
public final class RedisConnection implements AutoCloseable {

    private final ClientResources resources;
    private final AutoCloseable client;
    private final StatefulConnection<byte[], byte[]> connection;
    private final RedisClusterAsyncCommands<byte[], byte[]> commands;
    private final boolean cluster;
    private final String description;

    private RedisConnection(
            ClientResources resources,
            AutoCloseable client,
            StatefulConnection<byte[], byte[]> connection,
            RedisClusterAsyncCommands<byte[], byte[]> commands,
            boolean cluster,
            String description) {
        this.resources = resources;
        this.client = client;
        this.connection = connection;
        this.commands = commands;
        this.cluster = cluster;
        this.description = description;
    }

    /**
     * Connects to {@code clusterUris} as a Redis Cluster when the list is not empty, else to the single server
     * {@code uri}. Every command times out after {@code timeout}.
     */
    // Lettuce 7.x deprecates the adaptive-trigger switches; 7.7 still honours them, and they are what lets a promoted
    // replica take its slots' traffic within a second instead of at the next periodic refresh.
    @SuppressWarnings("deprecation")
    public static RedisConnection open(String uri, List<String> clusterUris, Duration timeout) {
        ClientResources resources = DefaultClientResources.builder()
                .ioThreadPoolSize(2)
                .computationThreadPoolSize(2)
                .build();
        TimeoutOptions timeouts = TimeoutOptions.builder().fixedTimeout(timeout).build();
        try {
            if (clusterUris.isEmpty()) {
                RedisURI redisUri = RedisURI.create(uri);
                redisUri.setTimeout(timeout);
                RedisClient client = RedisClient.create(resources, redisUri);
                client.setOptions(
                        ClientOptions.builder().timeoutOptions(timeouts).build());
                StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE);
                return new RedisConnection(
                        resources, client::shutdown, connection, connection.async(), false, redact(redisUri));
            }
            List<RedisURI> seeds = new ArrayList<>();
            for (String seed : clusterUris) {
                RedisURI redisUri = RedisURI.create(seed.trim());
                redisUri.setTimeout(timeout);
                seeds.add(redisUri);
            }
            RedisClusterClient client = RedisClusterClient.create(resources, seeds);
            client.setOptions(ClusterClientOptions.builder()
                    .timeoutOptions(timeouts)
                    // A failed master is replaced by its replica; find out from the cluster, not from the next restart.
                    .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                            .enablePeriodicRefresh(Duration.ofSeconds(5))
                            .enableAdaptiveRefreshTrigger(
                                    RefreshTrigger.MOVED_REDIRECT,
                                    RefreshTrigger.ASK_REDIRECT,
                                    RefreshTrigger.PERSISTENT_RECONNECTS,
                                    RefreshTrigger.UNCOVERED_SLOT,
                                    RefreshTrigger.UNKNOWN_NODE)
                            .adaptiveRefreshTriggersTimeout(Duration.ofSeconds(1))
                            .build())
                    .build());
            StatefulRedisClusterConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE);
            return new RedisConnection(
                    resources,
                    client::shutdown,
                    connection,
                    connection.async(),
                    true,
                    "cluster " + seeds.stream().map(RedisConnection::redact).toList());
        } catch (RuntimeException e) {
            shutdown(resources);
            throw e;
        }
    }

    private static String redact(RedisURI uri) {
        return uri.getHost() + ":" + uri.getPort();
    }

    RedisClusterAsyncCommands<byte[], byte[]> commands() {
        return commands;
    }

    boolean cluster() {
        return cluster;
    }

    /** {@code host:port} (or the cluster's seeds), without credentials, for logs. */
    public String description() {
        return description;
    }

    @Override
    public void close() {
        try {
            connection.close();
            client.close();
        } catch (Exception e) {
            throw new IllegalStateException("closing the Redis client", e);
        } finally {
            shutdown(resources);
        }
    }

    private static void shutdown(ClientResources resources) {
        try {
            resources.shutdown(0, 2, TimeUnit.SECONDS).get(3, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("stopping the Redis client's threads", e);
        }
    }
}
