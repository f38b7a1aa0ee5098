package io.pegaflow.server.startup;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * The keys Spring Boot and spring-grpc bind under the prefixes our docs tell operators to set ({@code server.*},
 * {@code management.*}, {@code spring.grpc.*}), read from the configuration metadata every one of their jars ships
 * ({@code META-INF/spring-configuration-metadata.json}), so the list follows the libraries on the class path instead of
 * a hand-kept copy. Map- and list-typed keys own their children ({@code management.endpoint.health.group.readiness.*},
 * {@code management.metrics.tags.region}); relaxed spellings match because keys compare as
 * {@link ConfigurationPropertyName}s. Also the ids of the actuator endpoints, which
 * {@code management.endpoints.web.exposure.include} names.
 *
 * @param keys every bindable key under {@link #PREFIXES}
 * @param endpointIds the ids of {@code management.endpoint.<id>.*}, e.g. {@code health}, {@code loggers}
 */
record SpringKeys(PropertyKeys keys, Set<String> endpointIds) {

    /** The prefixes checked; other Spring keys ({@code spring.datasource.*}, {@code logging.*}) are not. */
    static final List<ConfigurationPropertyName> PREFIXES = List.of(
            ConfigurationPropertyName.of("server"),
            ConfigurationPropertyName.of("management"),
            ConfigurationPropertyName.of("spring.grpc"));

    private static final List<String> METADATA = List.of(
            "META-INF/spring-configuration-metadata.json", "META-INF/additional-spring-configuration-metadata.json");
    private static final Pattern ENDPOINT = Pattern.compile("management\\.endpoint\\.([a-z0-9-]+)\\..+");
    private static final Pattern CONTAINER =
            Pattern.compile("(java\\.util\\.(Map|List|Set|Collection|SortedMap|LinkedHashMap)\\b.*|.*\\[])");

    SpringKeys {
        endpointIds = Collections.unmodifiableSet(endpointIds);
    }

    /** Whether {@code name} lies under a prefix this catalogue answers for. */
    static boolean owns(ConfigurationPropertyName name) {
        return PREFIXES.stream().anyMatch(p -> p.isAncestorOf(name));
    }

    /** Reads every metadata file {@code loader} sees. */
    static SpringKeys read(@Nullable ClassLoader loader) {
        ClassLoader cl = loader != null ? loader : SpringKeys.class.getClassLoader();
        ObjectMapper json = JsonMapper.builder().build();
        PropertyKeys keys = new PropertyKeys();
        Set<String> endpoints = new TreeSet<>();
        try {
            for (String resource : METADATA) {
                for (URL url : Collections.list(cl.getResources(resource))) {
                    try (InputStream in = url.openStream()) {
                        for (JsonNode property : json.readTree(in).path("properties")) {
                            String name = property.path("name").asString("");
                            if (name.isEmpty()
                                    || !ConfigurationPropertyName.isValid(name)
                                    || !owns(ConfigurationPropertyName.of(name))) {
                                continue;
                            }
                            String type = property.path("type").asString("");
                            keys.addKey(name, CONTAINER.matcher(type).matches());
                            Matcher endpoint = ENDPOINT.matcher(name);
                            if (endpoint.matches()) {
                                endpoints.add(endpoint.group(1));
                            }
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading Spring's configuration metadata", e);
        }
        return new SpringKeys(keys, endpoints);
    }
}
