package io.pegaflow.testkit.hostile;

import java.lang.reflect.Method;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;
import org.instancio.Instancio;
import org.instancio.Select;
import org.instancio.generator.Generator;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * The cases of the hostile-input property tests (decision 0020): each property is a parameterized test over cases
 * that one Instancio stream draws from a {@link org.instancio.Random} seeded with {@link #SEED}, so a seed and a case
 * index name one input. The seed is random per run unless {@code -Dpega.hostile.seed=<long>} fixes it; {@link
 * SeedInFailure} puts it into every failure with the command that replays it. There is no shrinking: generators stay
 * small and bounded ({@link HostileValues}) so a failing case is readable.
 */
public final class HostileCases {
    /** The run's seed: {@code -Dpega.hostile.seed=<long>} replays a run, otherwise a new one each run. */
    public static final long SEED =
            Long.getLong("pega.hostile.seed", ThreadLocalRandom.current().nextLong());

    private HostileCases() {}

    /** {@code tries} cases built whole by {@code generator}, so Instancio fills nothing else. */
    public static <T> Stream<T> cases(Class<T> type, int tries, Generator<T> generator) {
        return Instancio.of(type).withSeed(SEED).supply(Select.root(), generator).stream()
                .limit(tries);
    }

    /** Puts the run's seed and the failing case into the failure, with how to replay it. */
    public static final class SeedInFailure
            implements TestExecutionExceptionHandler, LifecycleMethodExecutionExceptionHandler {
        @Override
        public void handleTestExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
            throw withSeed(context, failure);
        }

        @Override
        public void handleAfterEachMethodExecutionException(ExtensionContext context, Throwable failure)
                throws Throwable {
            throw withSeed(context, failure);
        }

        private static AssertionError withSeed(ExtensionContext context, Throwable failure) {
            String method = context.getTestMethod().map(Method::getName).orElse("?");
            String type = context.getRequiredTestClass().getSimpleName();
            return new AssertionError(
                    String.format(
                            "%s case %s failed with seed %d; replay with -Dtest='%s#%s' -Dpega.hostile.seed=%d: %s",
                            type, context.getDisplayName(), SEED, type, method, SEED, failure),
                    failure);
        }
    }
}
