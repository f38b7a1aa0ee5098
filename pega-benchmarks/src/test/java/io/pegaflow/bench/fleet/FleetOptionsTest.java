package io.pegaflow.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.bench.cli.CommandLines;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The fleet simulator's options go through the benchmarks' one command-line parser. */
class FleetOptionsTest {

    @Test
    void shouldParseDurationsWithTheSharedSyntaxAndNameTheOptionItRefuses() {
        FleetOptions o = FleetOptions.parse("--targets=127.0.0.1:50056", "--duration=1.5s", "--warmup=250ms");
        assertThat(o.duration()).isEqualTo(Duration.ofMillis(1500));
        assertThat(o.warmupDuration()).isEqualTo(Duration.ofMillis(250));
        assertThat(o.burstEveryDuration()).isEqualTo(Duration.ofSeconds(20));

        assertThatThrownBy(() -> FleetOptions.parse("--targets=127.0.0.1:50056", "--crash-every=soon"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--crash-every: not a duration: 'soon'");
        assertThatThrownBy(() -> FleetOptions.parse("--targets=127.0.0.1:50056", "--nodes=0"))
                .hasMessage("--nodes: expected 1..65535");
        assertThatThrownBy(() -> FleetOptions.parse("--nodes=3"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--targets");
    }

    @Test
    void shouldAnswerHelpWithTheUsage() {
        assertThatThrownBy(() -> FleetOptions.parse("--help"))
                .isInstanceOf(CommandLines.HelpRequested.class)
                .hasMessageContaining("--targets")
                .hasMessageContaining("--crash-downtime");
    }
}
