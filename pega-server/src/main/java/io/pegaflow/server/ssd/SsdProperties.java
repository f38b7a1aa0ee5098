package io.pegaflow.server.ssd;

import io.pegaflow.core.ssd.SsdConfig;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * The SSD tier under {@code pega.ssd.*} (reference flags {@code --ssd-cache-*}). Off unless
 * {@code enabled}; when on, the host alignment becomes 512 bytes and blocks spill to the shards after sealing.
 *
 * @param enabled turn the tier on; when left unset, giving {@code paths} turns it on ({@code --ssd-cache-path} given)
 * @param paths one shard file per entry, each on the drive it should use; an entry naming an existing directory, or
 *     ending in {@code /}, means {@code <dir>/shard-00000N.dat} (a missing directory is created)
 * @param capacity total ring bytes, split evenly over the shards ({@code --ssd-cache-capacity}, 512 GB)
 * @param shardCapacity ring bytes per shard; overrides {@code capacity} when non-zero
 * @param writeQueueDepth write batches waiting for the writer before new ones are dropped (8)
 * @param prefetchQueueDepth prefetch batches waiting for the reader before new ones answer a miss (2)
 * @param writeInflight block writes in flight over all shards (2)
 * @param prefetchInflight block reads in flight over all shards (16)
 * @param maxPrefetchBlocks blocks being read from SSD at once over all queries; the rest of a query's SSD part is
 *     skipped and counted as backpressure ({@code --max-prefetch-blocks}, 800)
 * @param verifyOnStart checksum every payload while rebuilding the index at start (reads the whole tier); false checks
 *     only headers at start and each payload when it is read
 * @param freeSpaceMargin space every filesystem holding shards keeps free: a capacity that needs more than the free
 *     space minus this margin is refused before any file is allocated
 */
@Validated
@ConfigurationProperties("pega.ssd")
public record SsdProperties(
        @DefaultValue("false") boolean enabled,
        @NotNull @DefaultValue List<String> paths,
        @NotNull @DefaultValue("512GB") DataSize capacity,
        @NotNull @DefaultValue("0B") DataSize shardCapacity,
        @Min(1) @DefaultValue("8") int writeQueueDepth,
        @Min(1) @DefaultValue("2") int prefetchQueueDepth,
        @Min(1) @DefaultValue("2") int writeInflight,
        @Min(1) @DefaultValue("16") int prefetchInflight,
        @Min(1) @DefaultValue("800") int maxPrefetchBlocks,
        @DefaultValue("true") boolean verifyOnStart,
        @NotNull @DefaultValue("1GB") DataSize freeSpaceMargin) {

    /**
     * The core configuration.
     *
     * @throws IllegalArgumentException naming the key when no path is given or a capacity is unusable
     */
    public SsdConfig toConfig() {
        if (paths.isEmpty()) {
            throw new IllegalArgumentException(
                    "pega.ssd.paths: [] (expected: at least one shard file when pega.ssd.enabled=true)");
        }
        List<Path> files = new ArrayList<>(paths.size());
        for (int i = 0; i < paths.size(); i++) {
            String path = paths.get(i).trim();
            Path p = Path.of(path);
            // A trailing slash says "a directory" even before it exists: the store creates it, instead of a file
            // named like the directory was meant to be.
            boolean directory = Files.isDirectory(p) || path.endsWith("/");
            files.add(directory ? p.resolve(String.format(Locale.ROOT, "shard-%06d.dat", i)) : p);
        }
        long perShard = shardCapacity.toBytes() > 0 ? shardCapacity.toBytes() : capacity.toBytes() / files.size();
        return new SsdConfig(
                files, perShard, writeQueueDepth, prefetchQueueDepth, writeInflight, prefetchInflight, verifyOnStart);
    }
}
