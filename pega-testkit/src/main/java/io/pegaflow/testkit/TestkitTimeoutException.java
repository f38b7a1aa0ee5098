package io.pegaflow.testkit;

/**
 * A testkit wait ran out of time: a load state that never left 0, a query that stayed {@code Loading}, blocks that
 * never became queryable. Unchecked, so a test that does not expect it simply fails with the message.
 */
public final class TestkitTimeoutException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public TestkitTimeoutException(String message) {
        super(message);
    }
}
