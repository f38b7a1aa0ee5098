package io.pegaflow.server.startup;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ClassPathScanningCandidateComponentProvider;
import org.springframework.core.Ordered;
import org.springframework.core.PriorityOrdered;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.type.filter.AnnotationTypeFilter;
import org.springframework.util.ClassUtils;

/**
 * Refuses a {@code pega.*} key that no properties record binds, before any bean exists: Spring would otherwise ignore
 * it, and {@code --pega.pool.sise=1GB} would start the default 2 GB pool without a word. The known keys are walked
 * from the {@code @ConfigurationProperties} records of the application's packages. The same for the Spring keys our
 * docs tell operators to set ({@code server.*}, {@code management.*}, {@code spring.grpc.*}: {@link SpringKeys}), for
 * an endpoint id in {@code management.endpoints.web.exposure.include} that names no endpoint, and for a profile
 * without its file ({@link ProfilesCheck}).
 *
 * <p>Checked: configuration files, command-line arguments and test properties. Not checked: environment variables
 * and JVM system properties, which also carry other things under the same names ({@code PEGA_ADMIN_TOKEN} as a
 * placeholder, {@code -Dpega.cuda.blockingSync} for the CUDA backend).
 */
final class UnknownPropertiesCheck implements BeanFactoryPostProcessor, EnvironmentAware, PriorityOrdered {
    private static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of("pega");
    private static final ConfigurationPropertyName EXPOSURE =
            ConfigurationPropertyName.of("management.endpoints.web.exposure.include");

    private final List<String> basePackages;
    // Null until Spring calls setEnvironment (EnvironmentAware), which it does before postProcessBeanFactory.
    private @Nullable Environment environment;

    /** @param basePackages the app's own package and the shared edge's, whose records the app also binds */
    UnknownPropertiesCheck(String... basePackages) {
        this.basePackages = List.of(basePackages);
    }

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    @Override
    public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
        Environment env =
                Objects.requireNonNull(environment, "setEnvironment was not called before postProcessBeanFactory");
        ProfilesCheck.check(env);
        check(
                env,
                knownKeys(basePackages, beanFactory.getBeanClassLoader()),
                SpringKeys.read(beanFactory.getBeanClassLoader()));
    }

    /**
     * @throws StartupCheckException naming the first unknown key (or unknown endpoint id in the web exposure), its value
     *     and origin, and the key it resembles
     */
    static void check(Environment environment, PropertyKeys known, SpringKeys spring) {
        List<ConfigurationPropertyName> unknown = new ArrayList<>();
        ConfigurationProperty first = null;
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (!(source instanceof IterableConfigurationPropertySource names) || !checked(source)) {
                continue;
            }
            for (ConfigurationPropertyName name : names.stream().toList()) {
                boolean isUnknown = ROOT.isAncestorOf(name)
                        ? !known.isKnown(name)
                        : SpringKeys.owns(name) && !spring.keys().isKnown(name);
                if (isUnknown) {
                    first = unknown.isEmpty() ? source.getConfigurationProperty(name) : first;
                    unknown.add(name);
                } else if (EXPOSURE.equals(name) || EXPOSURE.isAncestorOf(name)) {
                    checkExposure(source.getConfigurationProperty(name), spring.endpointIds());
                }
            }
        }
        if (unknown.isEmpty()) {
            return;
        }
        ConfigurationPropertyName name = unknown.get(0);
        boolean pega = ROOT.isAncestorOf(name);
        String like = pega ? known.suggest(name) : spring.keys().suggest(name);
        List<String> others = unknown.subList(1, unknown.size()).stream()
                .map(Object::toString)
                .toList();
        throw new StartupCheckException(
                name.toString(),
                first == null ? "" : first.getValue() + Origins.describe(first.getOrigin()),
                (pega
                                ? "a key of pega-server (docs/configuration.md)"
                                : "a key that Spring Boot or spring-grpc binds (their configuration metadata)")
                        + (like == null ? "" : "; did you mean " + like + "?"),
                "correct or remove it, since Spring would ignore it and start with the default"
                        + (others.isEmpty() ? "" : "; also unknown: " + String.join(", ", others)));
    }

    /** Every id in {@code management.endpoints.web.exposure.include} must be an endpoint, or Spring drops it. */
    private static void checkExposure(@Nullable ConfigurationProperty property, Set<String> endpointIds) {
        if (property == null) {
            return;
        }
        for (String id : String.valueOf(property.getValue()).split(",", -1)) {
            String trimmed = id.trim();
            if (trimmed.isEmpty() || trimmed.equals("*") || endpointIds.contains(trimmed)) {
                continue;
            }
            String like = endpointIds.stream()
                    .min(Comparator.comparingInt(known -> PropertyKeys.distance(trimmed, known)))
                    .filter(known -> PropertyKeys.distance(trimmed, known) <= 2)
                    .orElse(null);
            throw new StartupCheckException(
                    property.getName().toString(),
                    trimmed + Origins.describe(property.getOrigin()),
                    "an actuator endpoint id or *" + (like == null ? "" : "; did you mean " + like + "?"),
                    "correct or remove it, since Spring would expose nothing for it");
        }
    }

    private static boolean checked(ConfigurationPropertySource source) {
        Object underlying = source.getUnderlyingSource();
        if (underlying instanceof SystemEnvironmentPropertySource) {
            return false;
        }
        return !(underlying instanceof PropertySource<?> ps
                && StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME.equals(ps.getName()));
    }

    /** Keys of every {@code @ConfigurationProperties} record under {@code basePackages}. */
    static PropertyKeys knownKeys(List<String> basePackages, @Nullable ClassLoader loader) {
        ClassPathScanningCandidateComponentProvider scanner = new ClassPathScanningCandidateComponentProvider(false);
        scanner.addIncludeFilter(new AnnotationTypeFilter(ConfigurationProperties.class));
        PropertyKeys keys = new PropertyKeys();
        basePackages.stream()
                .flatMap(p -> scanner.findCandidateComponents(p).stream())
                .forEach(candidate -> {
                    Class<?> type = ClassUtils.resolveClassName(
                            Objects.requireNonNull(
                                    candidate.getBeanClassName(), "a scanned candidate has its class name"),
                            loader);
                    ConfigurationProperties a = type.getAnnotation(ConfigurationProperties.class);
                    String prefix = a.prefix().isEmpty() ? a.value() : a.prefix();
                    if (!type.isRecord()) {
                        throw new IllegalStateException(
                                type + ": properties must be records, so their keys can be checked");
                    }
                    keys.add(prefix, type);
                });
        return keys;
    }
}
