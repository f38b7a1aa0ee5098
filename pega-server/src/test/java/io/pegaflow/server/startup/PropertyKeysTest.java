package io.pegaflow.server.startup;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.edge.EdgeConfiguration;
import io.pegaflow.server.PegaServerApplication;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;

/** The key catalogue walked from the properties records, and the suggestion for a mistyped key. */
@Timeout(30)
class PropertyKeysTest {
    private static final PropertyKeys KEYS = UnknownPropertiesCheck.knownKeys(
            List.of(PegaServerApplication.class.getPackageName(), EdgeConfiguration.class.getPackageName()),
            PropertyKeysTest.class.getClassLoader());

    private static boolean known(String name) {
        return KEYS.isKnown(ConfigurationPropertyName.of(name));
    }

    @Test
    void shouldKnowTheKeysOfEveryPropertiesRecord() {
        assertThat(known("pega.pool.size")).isTrue();
        assertThat(known("pega.pool.hint-value-size")).isTrue();
        assertThat(known("pega.ssd.verify-on-start")).isTrue();
        assertThat(known("pega.http.allowed-hosts[0]")).isTrue(); // the shared edge's record
        assertThat(known("pega.metaserver.advertise-addr")).isTrue();
        assertThat(known("pega.admin.token")).isTrue();
    }

    @Test
    void shouldAcceptListElementsButNothingBelowAScalar() {
        assertThat(known("pega.device.devices[0]")).isTrue();
        assertThat(known("pega.ssd.paths[3]")).isTrue();
        assertThat(known("pega.pool.size.extra")).isFalse();
        assertThat(known("pega.pool")).isFalse();
        assertThat(known("pega.pool.sise")).isFalse();
    }

    @Test
    void shouldSuggestTheKeyATypoWasMeantFor() {
        assertThat(KEYS.suggest(ConfigurationPropertyName.of("pega.pool.sise"))).isEqualTo("pega.pool.size");
        assertThat(KEYS.suggest(ConfigurationPropertyName.of("pega.ssd.path"))).isEqualTo("pega.ssd.paths");
        assertThat(KEYS.suggest(ConfigurationPropertyName.of("pega.pool.shrads")))
                .isEqualTo("pega.pool.shards");
        assertThat(KEYS.suggest(ConfigurationPropertyName.of("pega.cache.admision")))
                .isEqualTo("pega.cache.admission");
        assertThat(KEYS.suggest(ConfigurationPropertyName.of("pega.something.else.entirely")))
                .isNull();
    }

    @Test
    void shouldCountATransposedPairAsOneEdit() {
        assertThat(PropertyKeys.distance("size", "sise")).isEqualTo(1);
        assertThat(PropertyKeys.distance("shards", "shrads")).isEqualTo(1);
        assertThat(PropertyKeys.distance("abc", "abc")).isZero();
        assertThat(PropertyKeys.distance("", "abc")).isEqualTo(3);
    }

    @Test
    void shouldWriteComponentNamesAsKebabCase() {
        assertThat(PropertyKeys.kebab("hintValueSize")).isEqualTo("hint-value-size");
        assertThat(PropertyKeys.kebab("size")).isEqualTo("size");
    }
}
