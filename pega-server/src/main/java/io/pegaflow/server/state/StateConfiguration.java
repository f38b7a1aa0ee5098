package io.pegaflow.server.state;

import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.journal.JournalVersionException;
import io.pegaflow.core.journal.RegistrationJournal;
import io.pegaflow.server.config.StateProperties;
import io.pegaflow.server.startup.StartupCheckException;
import java.util.Objects;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.DependsOn;

/**
 * Restart without the workers (decision 0010): the registration journal in {@code pega.state.dir}, which the engine
 * configuration hands to the engine, and the restore that re-opens what it holds before the gRPC port opens.
 *
 * <p>Ownership: the journal bean is closed by Spring after the engine, which depends on it and appends to it until
 * it closes.
 */
@Configuration(proxyBeanMethods = false)
public class StateConfiguration {

    /**
     * Opens the journal. A torn tail or a file that is no journal is dealt with inside (warned about, the server
     * starts); a journal of a newer format refuses the start with one line, since reading it could lose what a newer
     * server wrote.
     */
    @Bean(destroyMethod = "close")
    @Conditional(StateDirConfigured.class)
    @DependsOn("startupPreflight")
    RegistrationJournal registrationJournal(StateProperties state) {
        try {
            return RegistrationJournal.open(state.directory().orElseThrow());
        } catch (JournalVersionException e) {
            throw new StartupCheckException(
                    "pega.state.dir",
                    state.dir(),
                    "a registration journal this server can read",
                    Objects.requireNonNull(e.getMessage(), "a JournalVersionException has its message"));
        }
    }

    @Bean
    JournalRestore journalRestore(PegaEngine engine, ObjectProvider<RegistrationJournal> journal) {
        return new JournalRestore(engine, journal.getIfAvailable());
    }

    @Bean("restore")
    RestoreHealthIndicator restoreHealthIndicator(JournalRestore restore) {
        return new RestoreHealthIndicator(restore);
    }
}
