package io.pegaflow.server.startup;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;

/**
 * The last line of a clean shutdown. The engine bean depends on this one, so Spring destroys it after the engine
 * has closed its tiers (the SSD store after its queued I/O) and unmapped the pool: the line is written only once they
 * are done.
 */
final class ShutdownLog implements DisposableBean {
    private static final Logger LOG = LoggerFactory.getLogger(ShutdownLog.class);

    private final long poolBytes;

    ShutdownLog(long poolBytes) {
        this.poolBytes = poolBytes;
    }

    @Override
    public void destroy() {
        LOG.info(
                "pega-server stopped: engine closed, tiers closed after their queued I/O, pool of {} unmapped",
                Sizes.human(poolBytes));
    }
}
