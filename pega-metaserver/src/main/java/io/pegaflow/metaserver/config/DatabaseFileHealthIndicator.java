package io.pegaflow.metaserver.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * Health of the embedded H2 database file: DOWN once the file the metaserver opened at start was deleted or replaced
 * while it runs. H2 keeps writing to the open (now nameless) file, so every RPC still succeeds, but the node sessions
 * and fences it records are gone at the next restart: the operator must know now, not then.
 */
final class DatabaseFileHealthIndicator implements HealthIndicator {
    private static final Logger LOG = LoggerFactory.getLogger(DatabaseFileHealthIndicator.class);

    private final Path file;
    /** The file's identity at start; null when it could not be read (then the file counts as gone). */
    private final @Nullable Object fileKey;

    private final AtomicBoolean reported = new AtomicBoolean();

    DatabaseFileHealthIndicator(Path file) {
        this.file = file;
        this.fileKey = keyOf(file);
    }

    @Override
    public Health health() {
        Object now = keyOf(file);
        if (fileKey != null && Objects.equals(fileKey, now)) {
            return Health.up().withDetail("file", file.toString()).build();
        }
        String reason = "database file " + file + " was deleted or replaced while the metaserver runs; node sessions "
                + "and fences recorded since then will be lost at the next restart: restore the file, then restart";
        if (reported.compareAndSet(false, true)) {
            LOG.error(reason);
        }
        return Health.down().withDetail("reason", reason).build();
    }

    /** The file's identity (inode) where the file system has one; null when it cannot be read. */
    private static @Nullable Object keyOf(Path file) {
        try {
            return Files.readAttributes(file, BasicFileAttributes.class).fileKey();
        } catch (IOException e) {
            return null;
        }
    }
}
