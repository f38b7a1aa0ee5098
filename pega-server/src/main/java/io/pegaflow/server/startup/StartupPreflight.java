package io.pegaflow.server.startup;

import io.pegaflow.core.device.cuda.CudaDeviceBackend;
import io.pegaflow.core.ssd.SsdConfig;
import io.pegaflow.server.config.PegaProperties;
import io.pegaflow.server.config.SsdEnabled;
import io.pegaflow.server.internode.MetaserverClientConfiguration;
import io.pegaflow.server.internode.MetaserverClientProperties;
import io.pegaflow.server.ssd.SsdProperties;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.core.env.Environment;

/**
 * Every startup check that can be made without spending anything, run before the pool is mapped and pre-touched and
 * before any SSD shard is allocated (the engine and store beans depend on this bean): the backend, the pool against
 * the memory the host can still hand out, both listening ports, the metaserver addresses, and the SSD paths and
 * capacity against the free space of their filesystems. A failure is a {@link StartupCheckException} naming the key.
 */
public final class StartupPreflight {
    /** Each shard file is its ring plus a 4 KiB superblock. */
    private static final long SHARD_HEADER_BYTES = 4096;

    StartupPreflight(
            PegaProperties pega,
            SsdProperties ssd,
            MetaserverClientProperties metaserver,
            Environment env,
            HostMemory memory) {
        checkBackend(pega.device().backend());
        checkPool(pega.pool(), memory, Runtime.getRuntime());
        MetaserverClientConfiguration.checkAddresses(metaserver, env);
        checkPortFree(grpcKey(env), grpcHost(env), grpcPort(env));
        checkPortFree("server.port", env.getProperty("server.address", "0.0.0.0"), httpPort(env));
        if (SsdEnabled.in(env)) {
            checkSsd(ssd);
        }
    }

    static void checkBackend(String backend) {
        if ("cuda".equals(backend) && !CudaDeviceBackend.isAvailable()) {
            throw new StartupCheckException(
                    "pega.device.backend",
                    "cuda",
                    "a machine where libcuda loads and sees a GPU",
                    "run on a GPU node, or set pega.device.backend=auto (host backend without a GPU)");
        }
    }

    /**
     * The pool must fit in what the kernel can still hand out, leaving the margin and the JVM heap's room to grow
     * (the heap is committed lazily, the pool up front); with huge pages the free huge-page pool counts instead.
     */
    static void checkPool(PegaProperties.Pool pool, HostMemory memory, Runtime jvm) {
        long size = pool.size().toBytes();
        if (pool.hugePages() && size <= memory.hugePagesFreeBytes()) {
            return;
        }
        long margin = pool.memoryMargin().toBytes();
        long heapRoom = Math.max(0, jvm.maxMemory() - jvm.totalMemory());
        long fits = memory.availableBytes() == Long.MAX_VALUE
                ? Long.MAX_VALUE
                : memory.availableBytes() - margin - heapRoom;
        if (size > fits) {
            throw new StartupCheckException(
                    "pega.pool.size",
                    Sizes.setting(pool.size()),
                    "at most " + Sizes.floor(fits) + ": " + Sizes.human(memory.availableBytes()) + " available ("
                            + memory.source() + ") minus pega.pool.memory-margin " + Sizes.setting(pool.memoryMargin())
                            + " minus " + Sizes.human(heapRoom) + " the JVM heap may still grow (-Xmx)",
                    "lower pega.pool.size, free memory on this host, or lower -Xmx or pega.pool.memory-margin");
        }
    }

    /** A port another process already listens on would fail only after the pool is up; bind it once to find out. */
    static void checkPortFree(String key, String host, int port) {
        if (port <= 0) {
            return; // chosen by the kernel at bind time
        }
        try (ServerSocket probe = new ServerSocket()) {
            probe.setReuseAddress(true);
            probe.bind(new InetSocketAddress(host, port));
        } catch (IOException e) {
            throw new StartupCheckException(
                    key,
                    port,
                    "a port free on " + host + " (" + e.getMessage() + ")",
                    "stop the process listening on " + port + " (another pega-server?) or choose another " + key);
        }
    }

    /** Paths must be creatable, and the shards must fit in each filesystem's free space minus the margin. */
    static void checkSsd(SsdProperties ssd) {
        SsdConfig config = ssd.toConfig();
        Map<FileStore, Long> needed = new LinkedHashMap<>();
        Map<FileStore, Path> example = new LinkedHashMap<>();
        for (Path file : config.paths()) {
            // The store creates missing parent directories; the space they will take is on the nearest that exists.
            Path dir = file.toAbsolutePath().getParent();
            while (dir != null && !Files.exists(dir)) {
                dir = dir.getParent();
            }
            if (dir == null || !Files.isDirectory(dir)) {
                throw new StartupCheckException(
                        "pega.ssd.paths",
                        file,
                        "a file path whose parents are directories",
                        dir + " is a file: correct the path");
            }
            long existing = Files.isRegularFile(file) ? size(file) : 0;
            long more = Math.max(0, SHARD_HEADER_BYTES + config.shardCapacityBytes() - existing);
            FileStore store = fileStore(dir);
            needed.merge(store, more, Long::sum);
            example.putIfAbsent(store, dir);
        }
        String key = ssd.shardCapacity().toBytes() > 0 ? "pega.ssd.shard-capacity" : "pega.ssd.capacity";
        String value = Sizes.setting(ssd.shardCapacity().toBytes() > 0 ? ssd.shardCapacity() : ssd.capacity());
        long margin = ssd.freeSpaceMargin().toBytes();
        for (Map.Entry<FileStore, Long> e : needed.entrySet()) {
            long usable = usable(e.getKey());
            if (e.getValue() > usable - margin) {
                throw new StartupCheckException(
                        key,
                        value,
                        "shards that fit: they need " + Sizes.human(e.getValue()) + " more on the filesystem of "
                                + example.get(e.getKey()) + ", which has " + Sizes.human(usable)
                                + " free, and pega.ssd.free-space-margin " + Sizes.setting(ssd.freeSpaceMargin())
                                + " stays free",
                        "lower " + key + " (the default 512GB is the reference's), free space, or put shards on"
                                + " another drive");
            }
        }
    }

    private static String grpcKey(Environment env) {
        return env.containsProperty("spring.grpc.server.address")
                ? "spring.grpc.server.address"
                : "spring.grpc.server.port";
    }

    private static String grpcHost(Environment env) {
        String address = env.getProperty("spring.grpc.server.address");
        if (address != null && address.lastIndexOf(':') > 0) {
            return address.substring(0, address.lastIndexOf(':'))
                    .replace("[", "")
                    .replace("]", "");
        }
        return env.getProperty("spring.grpc.server.host", "0.0.0.0");
    }

    private static int grpcPort(Environment env) {
        String address = env.getProperty("spring.grpc.server.address");
        if (address != null && address.lastIndexOf(':') > 0) {
            return parsePort(address.substring(address.lastIndexOf(':') + 1));
        }
        return env.getProperty("spring.grpc.server.port", Integer.class, 9090);
    }

    private static int httpPort(Environment env) {
        return env.getProperty("server.port", Integer.class, 8080);
    }

    private static int parsePort(String text) {
        try {
            return Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            return -1; // not ours to judge: Spring gRPC reports a malformed address itself
        }
    }

    private static long size(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static FileStore fileStore(Path dir) {
        try {
            return Files.getFileStore(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long usable(FileStore store) {
        try {
            return store.getUsableSpace();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
