package io.pegaflow.server.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.server.startup.StartupFailures;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code pega.pd.*} at startup: a bad NIC list, lane count or transport list, or a UCX that cannot start on them,
 * stops the server with one line that names the {@code pega.pd} key the operator set (not the transfer engine's
 * {@code pega.rdma} key of the same meaning).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PdPushStartupTest {

    private static String failure(String... extra) {
        List<String> args = new ArrayList<>(List.of(extra));
        args.add("--server.address=127.0.0.1");
        args.add("--pega.pd.enabled=true");
        return StartupFailures.descriptionOf(StartupFailures.hostArgs(args.toArray(String[]::new)));
    }

    @Test
    void shouldNameThePushKeysInTheOneLine() {
        assertThat(failure("--pega.pd.nics=lo,,lo")).startsWith("pega.pd.nics: empty NIC name at entry 2 of 'lo,,lo'");
        assertThat(failure("--pega.pd.nics=lo", "--pega.pd.lanes=65"))
                .startsWith("pega.pd.lanes: 65 (expected 1 to 64)");
        assertThat(failure("--pega.pd.transports=tcp;x")).startsWith("pega.pd.transports: 'tcp;x'");
        assertThat(failure("--pega.pd.nics=nosuchnic0", "--pega.pd.transports=tcp"))
                .startsWith("pega.pd.nics: ")
                .contains("nosuchnic0")
                .doesNotContain("pega.rdma");
        assertThat(failure("--pega.pd.transports=tcp", "--pega.cluster.token=short"))
                .startsWith("pega.cluster.token: 5 characters (expected: at least 16")
                .doesNotContain("short");
    }
}
