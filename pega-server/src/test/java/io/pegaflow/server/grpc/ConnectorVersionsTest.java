package io.pegaflow.server.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.instance.ConnectorGeneration;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The version table: each release's generation, the presumed 0.24/0.25 families, additions and narrowing. */
@Timeout(10)
class ConnectorVersionsTest {
    private static final ConnectorVersions DEFAULTS =
            new ConnectorVersions(List.of(), EnumSet.allOf(ConnectorGeneration.class), true);

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "'', G0",
        "0.22.6, G1",
        "0.22.8, G1",
        "0.22.9, G2",
        "0.22.10, G2",
        "0.23.6, G2",
        "0.23.7, G3",
        "0.23.12, G3",
        "0.24.0, G3",
        "0.25.1, G3"
    })
    void shouldMapKnownReleasesToTheirGeneration(String version, ConnectorGeneration generation) {
        assertThat(DEFAULTS.generationOf(version)).contains(generation);
    }

    @ParameterizedTest
    @CsvSource({"0.22.5", "0.22.4", "0.21.2", "0.23.13", "0.26.0", "0.23.6+native-arena-v1", "0.25.1rc1", "v0.23.12"})
    void shouldRefuseWhatIsNotListed(String version) {
        assertThat(DEFAULTS.generationOf(version)).isEmpty();
    }

    @Test
    void shouldAcceptAdditionsWithTheirImpliedOrNamedGeneration() {
        ConnectorVersions versions = new ConnectorVersions(
                List.of("0.23.6+native-arena-v1", "0.26.0", "0.27.0=G2"),
                EnumSet.allOf(ConnectorGeneration.class),
                true);

        assertThat(versions.generationOf("0.23.6+native-arena-v1")).contains(ConnectorGeneration.G2);
        assertThat(versions.generationOf("0.26.0")).contains(ConnectorGeneration.G3);
        assertThat(versions.generationOf("0.27.0")).contains(ConnectorGeneration.G2);
    }

    @Test
    void shouldNarrowByGenerationAndPresumption() {
        ConnectorVersions versions = new ConnectorVersions(List.of(), EnumSet.of(ConnectorGeneration.G3), false);

        assertThat(versions.generationOf("")).isEqualTo(Optional.empty());
        assertThat(versions.generationOf("0.23.6")).isEmpty();
        assertThat(versions.generationOf("0.23.12")).contains(ConnectorGeneration.G3);
        assertThat(versions.generationOf("0.25.1")).isEmpty();
        assertThat(versions.describe()).isEqualTo("0.23.7-0.23.12");
    }

    @Test
    void shouldRefuseAVersionListedTwice() {
        assertThatThrownBy(() -> new ConnectorVersions(
                        List.of("0.26.0", "0.26.0=G2"), EnumSet.allOf(ConnectorGeneration.class), true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("pega.compat.extra-versions: 0.26.0 is listed twice (expected each version once)");
    }
}
