package io.pegaflow.server.startup;

/**
 * A setting this process cannot start with, found before anything costly (pool mapping, SSD allocation, ports) has
 * happened. {@link StartupFailureAnalyzer} turns it into the one line an operator reads.
 */
public final class StartupCheckException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String key;
    private final transient Object value;
    private final String expected;
    private final String fix;

    /**
     * @param key the setting, e.g. {@code pega.pool.size}
     * @param value what it was set to (with its origin where known)
     * @param expected what would have been accepted
     * @param fix what the operator can do
     */
    public StartupCheckException(String key, Object value, String expected, String fix) {
        super(key + ": " + value + " (expected: " + expected + ")");
        this.key = key;
        this.value = value;
        this.expected = expected;
        this.fix = fix;
    }

    public String key() {
        return key;
    }

    public Object value() {
        return value;
    }

    public String expected() {
        return expected;
    }

    public String fix() {
        return fix;
    }
}
