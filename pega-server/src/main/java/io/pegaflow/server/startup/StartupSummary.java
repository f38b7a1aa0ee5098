package io.pegaflow.server.startup;

import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.core.ssd.SsdStore;
import io.pegaflow.edge.access.AdminAccess;
import io.pegaflow.server.config.PegaProperties;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.server.internode.MetaserverClientProperties;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.StreamSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.event.SmartApplicationListener;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.PropertySource;
import org.springframework.util.StringUtils;

/**
 * One INFO block once the server is ready, with the effective configuration an operator checks first (profile and the
 * files it came from, backend, pool, SSD, admission, metaserver, ports, admin access), and one line when shutdown
 * begins, saying what is about to happen.
 */
final class StartupSummary implements SmartApplicationListener {
    private static final Logger LOG = LoggerFactory.getLogger(StartupSummary.class);
    /** Boot names each loaded file "Config resource 'class path resource [application.yml]' via location '...'". */
    private static final Pattern CONFIG_RESOURCE = Pattern.compile("^Config resource '(.+?)' via location");

    private final ObjectProvider<PegaEngine> engine;
    private final ObjectProvider<SsdStore> ssd;
    private final PegaProperties pega;
    private final MetaserverClientProperties metaserver;
    private final GrpcPort grpcPort;
    private final ConfigurableEnvironment env;

    StartupSummary(
            ObjectProvider<PegaEngine> engine,
            ObjectProvider<SsdStore> ssd,
            PegaProperties pega,
            MetaserverClientProperties metaserver,
            GrpcPort grpcPort,
            ConfigurableEnvironment env) {
        this.engine = engine;
        this.ssd = ssd;
        this.pega = pega;
        this.metaserver = metaserver;
        this.grpcPort = grpcPort;
        this.env = env;
    }

    @Override
    public boolean supportsEventType(Class<? extends ApplicationEvent> type) {
        return ApplicationReadyEvent.class.isAssignableFrom(type) || ContextClosedEvent.class.isAssignableFrom(type);
    }

    @Override
    public void onApplicationEvent(ApplicationEvent event) {
        if (event instanceof ApplicationReadyEvent) {
            // one placeholder per line: an argument's line breaks are escaped in the log (decision 0023), the
            // template's not
            List<String> lines = lines();
            LOG.info("pega-server ready" + "\n{}".repeat(lines.size()), lines.toArray());
        } else if (event instanceof ContextClosedEvent) {
            LOG.info(
                    "pega-server stopping: gRPC drains for up to {}, then instances are torn down, the SSD tier (if"
                            + " any) closes after its queued I/O, and the pool is unmapped",
                    env.getProperty("spring.grpc.server.shutdown-grace-period", "5s"));
        }
    }

    /** The block's lines, {@code "  name  value"}. */
    List<String> lines() {
        List<String> lines = new ArrayList<>();
        String[] profiles = env.getActiveProfiles();
        line(lines, "profile", profiles.length == 0 ? "default" : String.join(",", profiles));
        line(lines, "config", String.join(", ", configFiles(env)));
        PegaEngine e = engine.getIfAvailable();
        if (e != null) {
            PoolConfig pool = e.pool().config();
            line(
                    lines,
                    "backend",
                    e.backendName()
                            + (pega.device().devices().isEmpty()
                                    ? ""
                                    : " devices " + pega.device().devices()));
            line(
                    lines,
                    "pool",
                    String.format(
                            Locale.ROOT,
                            "%s in %d shard(s), huge pages %s, NUMA node %s, ready in %d ms",
                            Sizes.human(e.pool().capacityBytes()),
                            pool.shards(),
                            pool.hugePages() ? "on" : "off",
                            pool.numaNode() == PoolConfig.NO_NUMA_NODE ? "kernel default" : pool.numaNode(),
                            e.pool().readyNanos() / 1_000_000));
        }
        SsdStore store = ssd.getIfAvailable();
        line(
                lines,
                "ssd",
                store == null
                        ? "off"
                        : store.config().paths().size() + " shard(s) of "
                                + Sizes.human(store.config().shardCapacityBytes()) + ": "
                                + store.config().paths());
        line(lines, "admission", pega.cache().admission() + (pega.blockwiseAlloc() ? ", blockwise allocation" : ""));
        line(
                lines,
                "metaserver",
                StringUtils.hasText(metaserver.addr())
                        ? metaserver.addr() + " (advertising "
                                + (StringUtils.hasText(metaserver.advertiseAddr())
                                        ? metaserver.advertiseAddr()
                                        : "the gRPC address")
                                + ")"
                        : "off");
        line(
                lines,
                "grpc",
                env.getProperty("spring.grpc.server.host", "0.0.0.0") + ":" + grpcPort.port() + " (pegaflow.Engine)");
        line(
                lines,
                "http",
                env.getProperty("server.address", "0.0.0.0") + ":" + env.getProperty("local.server.port", "?")
                        + " (/health /metrics /actuator)");
        line(
                lines,
                "admin",
                adminLine(
                        pega.admin().token().isEmpty(),
                        AdminAccess.isLoopbackBind(env.getProperty("spring.grpc.server.host", "*")),
                        AdminAccess.isLoopbackBind(env.getProperty("server.address"))));
        return lines;
    }

    /** Who may call mutations, per listener: a loopback-only one admits local callers, any other needs the token. */
    static String adminLine(boolean noToken, boolean grpcLoopback, boolean httpLoopback) {
        String local = (grpcLoopback ? "gRPC" : "")
                + (grpcLoopback && httpLoopback ? " and " : "")
                + (httpLoopback ? "HTTP" : "");
        String others =
                noToken ? "disabled elsewhere (no pega.admin.token)" : "elsewhere with the bearer pega.admin.token";
        if (local.isEmpty()) {
            return noToken
                    ? "mutations disabled (no pega.admin.token, no loopback-only listener)"
                    : "mutations with the bearer pega.admin.token";
        }
        return "mutations from loopback on the " + local + " listener, " + others;
    }

    private static void line(List<String> lines, String name, Object value) {
        lines.add(String.format(Locale.ROOT, "  %-11s %s", name, value));
    }

    /** The configuration files Spring loaded, highest precedence first. */
    static List<String> configFiles(ConfigurableEnvironment env) {
        return StreamSupport.stream(env.getPropertySources().spliterator(), false)
                .map(PropertySource::getName)
                .map(CONFIG_RESOURCE::matcher)
                .filter(Matcher::find)
                .map(m -> m.group(1))
                .toList();
    }
}
