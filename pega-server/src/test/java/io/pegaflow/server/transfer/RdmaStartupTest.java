package io.pegaflow.server.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.server.PegaServerApplication;
import io.pegaflow.server.startup.StartupFailures;
import io.pegaflow.transfer.TransferEngine;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@code pega.rdma.*} at startup: a NIC list with an empty entry, a missing NIC and a UCX that cannot start on what
 * was configured each stop the server with one line naming the key (no silent fallback to running without
 * transfers); with nothing wrong the transfer engine is a bean with the configured lanes, and off by default.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaStartupTest {

    private static String[] args(String... extra) {
        List<String> args = new ArrayList<>(List.of(extra));
        args.add("--server.address=127.0.0.1");
        return StartupFailures.hostArgs(args.toArray(String[]::new));
    }

    private static String failure(String... extra) {
        return StartupFailures.descriptionOf(args(extra));
    }

    @Test
    void shouldRefuseAnEmptyNicEntryNamingIt() {
        assertThat(failure("--pega.rdma.enabled=true", "--pega.rdma.nics=lo,,lo"))
                .startsWith("pega.rdma.nics: empty NIC name at entry 2 of 'lo,,lo'");
    }

    @Test
    void shouldRefuseNoNicsAndANicThisHostLacks() {
        assertThat(failure("--pega.rdma.enabled=true")).startsWith("pega.rdma.nics: at least one NIC");
        assertThat(failure("--pega.rdma.enabled=true", "--pega.rdma.nics=nosuchnic0"))
                .startsWith("pega.rdma.nics: ")
                .contains("nosuchnic0");
    }

    @Test
    void shouldRefuseAUcxThatCannotStartOnTheTransportsGiven() {
        assertThat(failure("--pega.rdma.enabled=true", "--pega.rdma.nics=lo", "--pega.rdma.transports=nosuchtl"))
                .startsWith("pega.rdma.nics: UCX initialisation failed for pega.rdma.nics=lo");
    }

    @Test
    void shouldRefuseATransferTimeoutThatOutlivesTheLock() {
        assertThat(failure(
                        "--pega.rdma.enabled=true",
                        "--pega.rdma.nics=lo",
                        "--pega.rdma.transfer-lock-timeout=30s",
                        "--pega.rdma.transfer-timeout=30s"))
                .startsWith("pega.rdma.transfer-timeout: PT30S");
    }

    @Test
    void shouldRefuseALockTimeoutUnderASecondWhenEnabled() {
        // peers read the lock in whole seconds: 0 would leave them no time for a get (decision 0017)
        assertThat(failure(
                        "--pega.rdma.enabled=true",
                        "--pega.rdma.nics=lo",
                        "--pega.rdma.transfer-lock-timeout=500ms",
                        "--pega.rdma.transfer-timeout=100ms"))
                .startsWith("pega.rdma.transfer-lock-timeout: PT0.5S")
                .contains("pega.rdma.enabled=true");
    }

    @Test
    void shouldWireTheTransferEngineWhenEnabledAndNothingWhenOff() {
        try (ConfigurableApplicationContext on = new SpringApplicationBuilder(PegaServerApplication.class)
                .run(args(
                        "--pega.rdma.enabled=true",
                        "--pega.rdma.nics=lo",
                        "--pega.rdma.transports=tcp",
                        "--pega.rdma.qps-per-peer=3"))) {
            TransferEngine engine = on.getBean(TransferEngine.class);
            assertThat(engine.lanes()).isEqualTo(3);
            assertThat(engine.view().registeredBytes()).isEqualTo(16L << 20);
        }
        try (ConfigurableApplicationContext off =
                new SpringApplicationBuilder(PegaServerApplication.class).run(args())) {
            assertThat(off.getBeansOfType(TransferEngine.class)).isEmpty();
        }
    }
}
