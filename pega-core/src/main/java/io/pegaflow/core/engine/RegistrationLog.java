package io.pegaflow.core.engine;

/**
 * Where the engine records the registrations it accepted and the instances it ended, so that a restarted server can
 * re-open them (docs/decisions/0010-restart.md). The engine calls it under no lock of its own; an
 * implementation serialises its calls.
 */
public interface RegistrationLog {
    /** Records nothing: a server without {@code pega.state.dir}. */
    RegistrationLog NONE = new RegistrationLog() {
        @Override
        public void registered(RegisterCommand command) {}

        @Override
        public void removed(String instanceId) {}
    };

    /**
     * Records an accepted registration durably before it returns; the engine installs the device context only after.
     *
     * @throws java.io.UncheckedIOException when the record could not be made durable (the registration is refused)
     */
    void registered(RegisterCommand command);

    /**
     * Takes back a registration {@link #registered} recorded that then failed before it was installed (a device or
     * mapping failure after the record was durable), so that no restart re-opens a registration that never was. Best
     * effort: the engine logs a failure and goes on refusing the registration.
     *
     * @throws java.io.UncheckedIOException when the journal could not be rewritten
     */
    default void withdrawn(RegisterCommand command) {}

    /** Records that an instance ended (unregistered, its Session closed, cleaned up, idle while detached). */
    void removed(String instanceId);
}
