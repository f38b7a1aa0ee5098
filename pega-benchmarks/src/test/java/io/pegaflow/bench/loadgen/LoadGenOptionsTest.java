package io.pegaflow.bench.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.bench.cli.CommandLines;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class LoadGenOptionsTest {

    @Test
    void shouldApplyDefaultsAndTargetTheServersDefaultAddress() {
        LoadGenOptions o = LoadGenOptions.parse();

        assertThat(o.host()).isEqualTo("127.0.0.1");
        assertThat(o.port()).isEqualTo(50055);
        assertThat(o.scenario()).isEqualTo("mix");
        assertThat(o.workers()).isEqualTo(4);
        assertThat(o.duration()).isEqualTo(Duration.ofSeconds(30));
        assertThat(o.blockBytes()).isEqualTo(64 * 1024);
        assertThat(o.mix().toString()).isEqualTo("request=1");
        assertThat(o.verify()).isTrue();
        assertThat(o.progress()).isTrue();
        assertThat(o.instancePrefix()).startsWith("loadgen-");
    }

    @Test
    void shouldAcceptTheSizeUnitsTheServerAccepts() {
        for (String size : new String[] {"2MiB", "2MB", "2mb", "2048KiB", "2048KB", "2097152"}) {
            assertThat(LoadGenOptions.parse("--block-size", size).blockBytes())
                    .as(size)
                    .isEqualTo(2L << 20);
        }
    }

    @Test
    void shouldDescribeEveryOptionWithTheServersPortsInTheHelp() {
        String usage = LoadGenOptions.usage();
        assertThat(usage)
                .contains("--target=HOST:PORT")
                .contains("default 127.0.0.1:50055")
                .contains("http://127.0.0.1:9091")
                .doesNotContain(":9090")
                .contains("--no-verify")
                .contains("--e2e-reps");
    }

    @Test
    void shouldParseEveryOptionInBothSpellings() {
        LoadGenOptions o = LoadGenOptions.parse(
                "--target=[::1]:9",
                "--workers",
                "8",
                "--duration=2m",
                "--warmup",
                "500ms",
                "--mix",
                "save=1, query=3,load=2",
                "--block-size",
                "2MiB",
                "--blocks-per-request=16",
                "--prefixes",
                "50",
                "--zipf",
                "0.8",
                "--layers",
                "4",
                "--rate",
                "250.5",
                "--no-verify",
                "--no-progress",
                "--seed",
                "-3",
                "--hash-bytes",
                "16",
                "--json",
                "out.json",
                "--plot",
                "out.svg",
                "--scenario",
                "E2E",
                "--e2e-reps",
                "3");

        assertThat(o.host()).isEqualTo("::1");
        assertThat(o.port()).isEqualTo(9);
        assertThat(o.workers()).isEqualTo(8);
        assertThat(o.duration()).isEqualTo(Duration.ofMinutes(2));
        assertThat(o.warmup()).isEqualTo(Duration.ofMillis(500));
        assertThat(o.mix().weight(OpMix.Op.QUERY)).isEqualTo(3);
        assertThat(o.mix().includes(OpMix.Op.REQUEST)).isFalse();
        assertThat(o.blockBytes()).isEqualTo(2L << 20);
        assertThat(o.blocksPerRequest()).isEqualTo(16);
        assertThat(o.prefixes()).isEqualTo(50);
        assertThat(o.zipfExponent()).isEqualTo(0.8);
        assertThat(o.layers()).isEqualTo(4);
        assertThat(o.rate()).isEqualTo(250.5);
        assertThat(o.verify()).isFalse();
        assertThat(o.progress()).isFalse();
        assertThat(o.seed()).isEqualTo(-3);
        assertThat(o.hashBytes()).isEqualTo(16);
        assertThat(o.jsonPath()).isEqualTo("out.json");
        assertThat(o.plotPath()).isEqualTo("out.svg");
        assertThat(o.scenario()).isEqualTo("e2e");
        assertThat(o.e2eReps()).isEqualTo(3);
        assertThat(o.deviceBytesPerWorker()).isEqualTo(4L * 16 * (2L << 20));
    }

    @Test
    void shouldNameWhatIsWrong() {
        assertThatThrownBy(() -> LoadGenOptions.parse("--target", "localhost"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("HOST:PORT");
        assertThatThrownBy(() -> LoadGenOptions.parse("--target", "h:1", "--workers", "0"))
                .hasMessageContaining("--workers must be in 1..1024, got 0");
        assertThatThrownBy(() -> LoadGenOptions.parse("--target", "h:1", "--bogus", "1"))
                .hasMessageContaining("Unknown option")
                .hasMessageContaining("'--bogus'");
        assertThatThrownBy(() -> LoadGenOptions.parse("--target", "h:1", "--zipf"))
                .hasMessageContaining("Missing required parameter for option '--zipf'");
        assertThatThrownBy(() -> LoadGenOptions.parse("--target", "h:1", "--workers", "many"))
                .hasMessageContaining("'many' is not an int");
        assertThatThrownBy(() -> LoadGenOptions.parse("--target", "h:1", "--block-size", "12 parsecs"))
                .hasMessageContaining("not a size");
        assertThatThrownBy(() -> LoadGenOptions.parse("--target", "h:1", "--mix", "save=0"))
                .hasMessageContaining("no operation with a positive weight");
        assertThatThrownBy(() -> LoadGenOptions.parse("--target", "h:1", "--mix", "fetch=1"))
                .hasMessageContaining("unknown operation 'fetch'");
        assertThatThrownBy(() -> LoadGenOptions.parse("--target", "h:1", "--scenario", "soak"))
                .hasMessageContaining("--scenario must be mix or e2e");
        assertThatThrownBy(() -> LoadGenOptions.parse("--target", "h:1", "--verify=maybe"))
                .hasMessageContaining("--verify");
        assertThatThrownBy(() -> LoadGenOptions.parse("--help")).isInstanceOf(CommandLines.HelpRequested.class);
    }

    @Test
    void shouldTakeBothSpellingsOfABooleanThatIsOnByDefault() {
        assertThat(LoadGenOptions.parse("--verify").verify()).isTrue();
        assertThat(LoadGenOptions.parse("--no-verify").verify()).isFalse();
        assertThat(LoadGenOptions.parse("--no-progress").progress()).isFalse();
    }

    @Test
    void shouldParseSizesAndDurations() {
        assertThat(Units.parseBytes("4096")).isEqualTo(4096);
        assertThat(Units.parseBytes("16k")).isEqualTo(16384);
        assertThat(Units.parseBytes("64KB")).isEqualTo(65536);
        assertThat(Units.parseBytes("64 KiB")).isEqualTo(65536);
        assertThat(Units.parseBytes("1g")).isEqualTo(1L << 30);
        assertThat(CommandLines.parseDuration("30")).isEqualTo(Duration.ofSeconds(30));
        assertThat(CommandLines.parseDuration("1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThat(CommandLines.parseDuration("250ms")).isEqualTo(Duration.ofMillis(250));
        assertThat(CommandLines.parseDuration("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(Units.formatBytes(65536)).isEqualTo("64 KiB");
        assertThat(Units.formatBytes(1000)).isEqualTo("1000 B");
        assertThat(Units.formatRate(12_345)).isEqualTo("12.3k");
    }

    @Test
    void shouldTakeTheAdminTokenFromTheOptionOrElseFromTheServersEnvironmentVariable() {
        assertThat(LoadGenOptions.parse().adminToken()).isEmpty();
        assertThat(LoadGenOptions.parse(Map.of("PEGA_ADMIN_TOKEN", "from-env-0123456789"))
                        .adminToken())
                .isEqualTo("from-env-0123456789");
        assertThat(LoadGenOptions.parse(
                                Map.of("PEGA_ADMIN_TOKEN", "from-env-0123456789"),
                                "--admin-token",
                                "from-option-0123456789")
                        .adminToken())
                .isEqualTo("from-option-0123456789");
        assertThat(LoadGenOptions.usage()).contains("--admin-token=TOKEN").contains("$PEGA_ADMIN_TOKEN");
    }
}
