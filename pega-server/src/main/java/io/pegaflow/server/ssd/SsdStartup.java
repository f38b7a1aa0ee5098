package io.pegaflow.server.ssd;

import io.pegaflow.core.ssd.SsdConfig;
import io.pegaflow.core.ssd.SsdStore;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.NanoClock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Opens the store so that a start that fails leaves nothing behind that it created itself. */
final class SsdStartup {
    private static final Logger LOG = LoggerFactory.getLogger(SsdStartup.class);

    private SsdStartup() {}

    /**
     * {@link SsdStore#open(SsdConfig, NanoClock, AgentGroup)}; when it throws, every shard file and parent directory that did not exist before is
     * deleted (a half-allocated file of hundreds of GB would otherwise fill the disk it was meant to use), deepest
     * first, and whatever existed before is left alone.
     */
    static SsdStore open(SsdConfig config, AgentGroup agents) {
        List<Path> created = new ArrayList<>();
        for (Path file : config.paths()) {
            for (Path p = file.toAbsolutePath(); p != null && !Files.exists(p); p = p.getParent()) {
                if (!created.contains(p)) {
                    created.add(p);
                }
            }
        }
        created.sort(Comparator.comparingInt(Path::getNameCount).reversed());
        try {
            return SsdStore.open(config, NanoClock.SYSTEM, agents);
        } catch (RuntimeException e) {
            // Deepest first: a directory is empty by the time its turn comes.
            for (Path p : created) {
                try {
                    if (Files.deleteIfExists(p)) {
                        LOG.info("removed {}, created by this failed start", p);
                    }
                } catch (IOException deleteFailure) {
                    e.addSuppressed(deleteFailure);
                }
            }
            throw e;
        }
    }
}
