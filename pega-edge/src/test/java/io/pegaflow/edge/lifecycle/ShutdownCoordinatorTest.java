package io.pegaflow.edge.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

/** The coordinator closes the context once and exits with its code; a second request does nothing. */
@Timeout(30)
class ShutdownCoordinatorTest {

    @Test
    void shouldCloseTheContextOnceAndExitWithItsCode() throws Exception {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.refresh();
        CompletableFuture<Integer> exited = new CompletableFuture<>();
        ShutdownCoordinator coordinator = new ShutdownCoordinator(context, exited::complete);

        assertThat(coordinator.requestShutdown("test")).isTrue();
        assertThat(coordinator.requestShutdown("again")).isFalse();

        assertThat(exited.get(10, TimeUnit.SECONDS)).isZero();
        assertThat(context.isActive()).isFalse();
        assertThat(coordinator.requested()).isTrue();
    }
}
