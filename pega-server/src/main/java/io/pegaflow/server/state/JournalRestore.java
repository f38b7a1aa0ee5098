package io.pegaflow.server.state;

import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.engine.RestoreReport;
import io.pegaflow.core.journal.RegistrationJournal;
import java.util.Locale;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationListener;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.event.ContextClosedEvent;

/**
 * Re-opens the journaled registrations when the context starts, in the lifecycle phase just before the gRPC server's
 * ({@link #PHASE}): the HTTP port is already open, so {@code /actuator/health} can say that the server is restoring,
 * and no worker RPC can arrive before every restored instance is in place. Without a journal it has nothing to do and
 * is done at once.
 *
 * <p>When the context closes, before any lifecycle stops, it tells the engine to keep the journal as it is: the gRPC
 * server's shutdown cancels every Session stream, and a worker whose stream the server itself ended is still alive
 * and is restored by the next start ({@link PegaEngine#retainRegistrations()}).
 *
 * <p>Thread-safety: {@link #start()} runs once on the context's thread; the state is read by health checks and
 * metric scrapes from any thread.
 */
public final class JournalRestore implements SmartLifecycle, ApplicationListener<ContextClosedEvent> {
    private static final Logger LOG = LoggerFactory.getLogger(JournalRestore.class);

    /** Spring gRPC starts its server in phase {@code Integer.MAX_VALUE}; the embedded web server well before. */
    static final int PHASE = Integer.MAX_VALUE - 1;

    /** Where the restore is. */
    public enum State {
        /** Not started yet: the journal is read, its registrations not yet re-opened. */
        PENDING,
        /** Re-opening registrations. */
        RESTORING,
        /** Finished (or nothing to do): {@link #report()} says what happened. */
        DONE
    }

    private final PegaEngine engine;
    private final Optional<RegistrationJournal> journal;
    private volatile State state = State.PENDING;
    private volatile RestoreReport report = RestoreReport.NONE;
    private volatile int journaled;
    private volatile boolean running;

    JournalRestore(PegaEngine engine, @Nullable RegistrationJournal journal) {
        this.engine = engine;
        this.journal = Optional.ofNullable(journal);
    }

    @Override
    public void start() {
        running = true;
        if (state != State.PENDING) {
            return;
        }
        if (journal.isEmpty()) {
            state = State.DONE;
            return;
        }
        RegistrationJournal.Recovery recovery = journal.get().recovery();
        journaled = recovery.registrations().size();
        state = State.RESTORING;
        try {
            report = engine.restore(recovery.registrations());
        } finally {
            state = State.DONE;
        }
        RestoreReport r = report;
        LOG.info(
                "restore: {} journaled registration(s) in {}; {} instance(s) restored detached {} with {} layer"
                        + " mapping(s), {} dropped {}, in {} ms",
                journaled,
                journal.get().file(),
                r.restored().size(),
                r.restored(),
                r.layers(),
                r.dropped().size(),
                r.dropped(),
                String.format(Locale.ROOT, "%.1f", r.nanos() / 1e6));
    }

    @Override
    public void onApplicationEvent(ContextClosedEvent event) {
        engine.retainRegistrations();
    }

    @Override
    public void stop() {
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    public State state() {
        return state;
    }

    /** Whether a journal is configured ({@code pega.state.dir}). */
    public boolean journaling() {
        return journal.isPresent();
    }

    /** Registrations the journal held at start. */
    public int journaled() {
        return journaled;
    }

    /** What the restore did; {@link RestoreReport#NONE} before it finished or without a journal. */
    public RestoreReport report() {
        return report;
    }
}
