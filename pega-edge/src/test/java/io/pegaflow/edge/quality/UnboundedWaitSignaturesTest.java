package io.pegaflow.edge.quality;

import static org.assertj.core.api.Assertions.assertThat;

import de.thetaphi.forbiddenapis.Checker;
import de.thetaphi.forbiddenapis.CheckerResult;
import de.thetaphi.forbiddenapis.ForbiddenViolation;
import de.thetaphi.forbiddenapis.Logger;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;

/**
 * The build's forbidden-apis baseline (config/quality/forbidden-baseline.txt) catches an unbounded wait however it is
 * reached (through an interface, a subclass, a lambda) and lets the timed overloads through (decision 0016). The
 * check itself runs in every module's build; this proves the signatures say what the decision says.
 */
class UnboundedWaitSignaturesTest {
    private static final Path BASELINE = Path.of("..", "config", "quality", "forbidden-baseline.txt");

    /** Each method waits without a deadline in a different way. */
    @SuppressWarnings({"unused", "FutureReturnValueIgnored", "WaitNotInLoop"})
    static final class Unbounded {
        void futureGet(Future<?> f) throws InterruptedException, ExecutionException {
            f.get();
        }

        void completableJoin(CompletableFuture<?> f) {
            f.join();
        }

        void completableGet(CompletableFuture<?> f) throws InterruptedException, ExecutionException {
            f.get();
        }

        void latch(CountDownLatch l) throws InterruptedException {
            l.await();
        }

        void condition(Condition c) throws InterruptedException {
            c.await();
        }

        void take(ArrayBlockingQueue<Object> q) throws InterruptedException {
            q.take();
        }

        void put(BlockingQueue<Object> q) throws InterruptedException {
            q.put(new Object());
        }

        void thread(Thread t) throws InterruptedException {
            t.join();
        }

        void semaphore(Semaphore s) throws InterruptedException {
            s.acquire();
        }

        void monitor(Object o) throws InterruptedException {
            synchronized (o) {
                o.wait();
            }
        }

        Runnable inLambda(CompletableFuture<?> f) {
            return f::join;
        }

        void process(Process p) throws InterruptedException {
            p.waitFor();
        }
    }

    /** The same waits, each with its deadline. */
    @SuppressWarnings({"unused", "WaitNotInLoop"})
    static final class Bounded {
        void waits(
                CompletableFuture<?> f,
                CountDownLatch l,
                Condition c,
                BlockingQueue<Object> q,
                Thread t,
                Semaphore s,
                Process p)
                throws Exception {
            f.get(1, TimeUnit.SECONDS);
            f.getNow(null);
            f.orTimeout(1, TimeUnit.SECONDS);
            l.await(1, TimeUnit.SECONDS);
            c.await(1, TimeUnit.SECONDS);
            q.poll(1, TimeUnit.SECONDS);
            q.offer(new Object(), 1, TimeUnit.SECONDS);
            t.join(1_000);
            s.tryAcquire(1, TimeUnit.SECONDS);
            p.waitFor(1, TimeUnit.SECONDS);
            ReentrantLock lock = new ReentrantLock();
            if (lock.tryLock(1, TimeUnit.SECONDS)) {
                lock.unlock();
            }
        }

        void ignoreTimeout(CompletableFuture<?> f) throws ExecutionException, InterruptedException {
            try {
                f.get(1, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                // fine: the caller decides
            }
        }
    }

    private static List<ForbiddenViolation> violations(Class<?> sample) throws Exception {
        Logger quiet = new Logger() {
            @Override
            public void error(String msg) {}

            @Override
            public void warn(String msg) {}

            @Override
            public void info(String msg) {}

            @Override
            public void debug(String msg) {}
        };
        Checker checker = new Checker(
                quiet,
                UnboundedWaitSignaturesTest.class.getClassLoader(),
                Checker.Option.IGNORE_SIGNATURES_OF_MISSING_CLASSES);
        checker.parseSignaturesString(Files.readString(BASELINE));
        String resource = sample.getName().replace('.', '/') + ".class";
        try (InputStream in = sample.getClassLoader().getResourceAsStream(resource)) {
            checker.streamReadClassToCheck(in, resource);
        }
        // a lambda's body is a synthetic method of the same class, which the checker sees with it
        List<ForbiddenViolation> out = new ArrayList<>();
        for (CheckerResult r : checker.runWithResults()) {
            out.addAll(r.getViolations());
        }
        return out;
    }

    @Test
    void shouldFlagEveryUnboundedWait() throws Exception {
        List<ForbiddenViolation> found = violations(Unbounded.class);

        // one line per sample method, each flagged by the wait rule
        assertThat(found.stream().map(v -> v.lineNo).distinct()).hasSize(12);
        assertThat(found).allMatch(v -> v.description.contains("Unbounded wait: use the overload with a timeout"));
    }

    @Test
    void shouldLetEveryTimedWaitThrough() throws Exception {
        assertThat(violations(Bounded.class)).isEmpty();
    }
}
