package io.pegaflow.server.startup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.edge.EdgeConfiguration;
import io.pegaflow.server.PegaServerApplication;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.FileSystemResource;

/**
 * The Spring keys read from the libraries' configuration metadata: what Spring legitimately accepts (relaxed spellings,
 * map- and list-typed keys) passes, every key our shipped files and docs' templates set passes, and a typo does not.
 */
@Timeout(60)
class SpringKeysTest {
    private static final SpringKeys SPRING = SpringKeys.read(SpringKeysTest.class.getClassLoader());
    private static final PropertyKeys PEGA = UnknownPropertiesCheck.knownKeys(
            List.of(PegaServerApplication.class.getPackageName(), EdgeConfiguration.class.getPackageName()),
            SpringKeysTest.class.getClassLoader());

    private static boolean known(String name) {
        return SPRING.keys().isKnown(ConfigurationPropertyName.of(name));
    }

    private static void check(Map<String, Object> properties) {
        StandardEnvironment env = new StandardEnvironment();
        env.getPropertySources().addFirst(new MapPropertySource("commandLineArgs", properties));
        UnknownPropertiesCheck.check(env, PEGA, SPRING);
    }

    @Test
    void shouldKnowTheKeysOfSpringBootAndSpringGrpcFromTheirMetadata() {
        assertThat(SPRING.keys().size()).isGreaterThan(300);
        assertThat(known("server.port")).isTrue();
        assertThat(known("server.tomcat.threads.max")).isTrue();
        assertThat(known("spring.grpc.server.port")).isTrue();
        assertThat(known("spring.grpc.server.keep-alive.permit-time")).isTrue();
        assertThat(known("management.endpoints.web.exposure.include")).isTrue();
        assertThat(known("server.prot")).isFalse();
        assertThat(SPRING.endpointIds()).contains("health", "loggers", "prometheus", "info");
    }

    @Test
    void shouldAcceptRelaxedSpellingsAndTheChildrenOfMapAndListKeys() {
        Map<String, Object> accepted = new LinkedHashMap<>();
        accepted.put("server.maxHttpRequestHeaderSize", "16KB"); // camel case
        accepted.put("server.tomcat.threads.max", "50");
        accepted.put("management.metrics.tags.region", "eu-1"); // Map<String, String>
        accepted.put("management.endpoint.health.group.custom.include", "ping"); // Map<String, Group>
        accepted.put("management.endpoints.web.exposure.include", "health,loggers");
        accepted.put("management.endpoints.web.exposure.include[2]", "*");
        accepted.put("spring.grpc.server.health.actuator.health-indicator-paths[0]", "grpc");
        accepted.put("pega.pool.size", "1GB");
        accepted.put("spring.datasource.url", "jdbc:h2:mem:x"); // not a prefix we check
        assertThatCode(() -> check(accepted)).doesNotThrowAnyException();
    }

    @Test
    void shouldRefuseAKeyBelowAScalarAndNameIt() {
        assertThatThrownBy(() -> check(Map.of("server.port.extra", "1")))
                .isInstanceOf(StartupCheckException.class)
                .hasMessageStartingWith("server.port.extra: 1");
    }

    @Test
    void shouldKnowEveryServerManagementAndGrpcKeyInTheShippedAndTemplateFiles() throws IOException {
        Path repo = Path.of("..");
        List<Path> files = new ArrayList<>();
        try (Stream<Path> config = Files.list(repo.resolve("config"));
                Stream<Path> jar = Files.list(Path.of("src/main/resources"))) {
            Stream.concat(config, jar)
                    .filter(p -> p.getFileName().toString().matches("application.*\\.ya?ml"))
                    .forEach(files::add);
        }
        assertThat(files).hasSizeGreaterThanOrEqualTo(4);
        List<String> unknown = new ArrayList<>();
        for (Path file : files) {
            for (PropertySource<?> source :
                    new YamlPropertySourceLoader().load(file.toString(), new FileSystemResource(file))) {
                for (String name : ((MapPropertySource) source).getPropertyNames()) {
                    ConfigurationPropertyName key = ConfigurationPropertyName.adapt(name, '.');
                    if (SpringKeys.owns(key) && !SPRING.keys().isKnown(key)) {
                        unknown.add(file + ": " + name);
                    }
                }
            }
        }
        assertThat(unknown).isEmpty();
    }
}
