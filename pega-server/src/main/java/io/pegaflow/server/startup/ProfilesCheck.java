package io.pegaflow.server.startup;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.StreamSupport;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

/**
 * Refuses a profile named in {@code spring.profiles.active} or {@code spring.profiles.include} that no configuration
 * file backs ({@code application-<profile>.yml}, {@code .yaml} or {@code .properties}, in the jar or on the config
 * path): Spring would start with the defaults, so {@code --spring.profiles.active=prodution} would run a 2 GB pool on
 * the auto backend instead of the production template, silently. A profile activated by a test
 * ({@code @ActiveProfiles}) is not a property and is not checked.
 */
final class ProfilesCheck {
    private ProfilesCheck() {}

    /** @throws StartupCheckException naming the first profile without a file and the profiles that have one */
    static void check(Environment environment) {
        if (!(environment instanceof ConfigurableEnvironment env)) {
            return;
        }
        Binder binder = Binder.get(env);
        List<String> configNames = list(binder, "spring.config.name", List.of("application"));
        List<String> loaded = StreamSupport.stream(env.getPropertySources().spliterator(), false)
                .map(PropertySource::getName)
                .toList();
        for (String key : List.of("spring.profiles.active", "spring.profiles.include")) {
            for (String profile : list(binder, key, List.of())) {
                if (profile.isBlank() || backed(profile, configNames, loaded)) {
                    continue;
                }
                List<String> available = available(configNames);
                String like = available.stream()
                        .min(Comparator.comparingInt(p -> PropertyKeys.distance(profile, p)))
                        .filter(p -> PropertyKeys.distance(profile, p) <= Math.max(2, profile.length() / 4))
                        .orElse(null);
                throw new StartupCheckException(
                        key,
                        profile,
                        "a profile with its own " + configNames.get(0) + "-" + profile
                                + ".yml in the jar or on the config path"
                                + (like == null ? "" : "; did you mean " + like + "?"),
                        "correct the profile's name, or add " + configNames.get(0) + "-" + profile
                                + ".yml to ./config/, since Spring would start with the defaults");
            }
        }
    }

    private static List<String> list(Binder binder, String key, List<String> otherwise) {
        List<String> bound = binder.bind(key, Bindable.listOf(String.class)).orElse(otherwise);
        return bound != null ? bound : otherwise;
    }

    /** The profiles whose files lie where Spring looks by default: in the jar and under ./ and ./config/. */
    private static List<String> available(List<String> configNames) {
        PathMatchingResourcePatternResolver resolver = new PathMatchingResourcePatternResolver();
        List<String> profiles = new ArrayList<>();
        for (String config : configNames) {
            for (String dir : List.of("classpath*:/", "classpath*:/config/", "file:./", "file:./config/")) {
                try {
                    for (Resource r : resolver.getResources(dir + config + "-*.*")) {
                        String file = r.getFilename();
                        if (file != null && file.matches(Pattern.quote(config) + "-.+\\.(yml|yaml|properties)")) {
                            String profile = file.substring(config.length() + 1, file.lastIndexOf('.'));
                            if (!profiles.contains(profile)) {
                                profiles.add(profile);
                            }
                        }
                    }
                } catch (IOException e) {
                    // Only the suggestion is lost: the refusal names the profile either way.
                }
            }
        }
        return profiles;
    }

    /** Whether a loaded configuration file is the profile's own; Spring names each source after its resource. */
    private static boolean backed(String profile, List<String> configNames, List<String> loaded) {
        return configNames.stream().anyMatch(config -> {
            Pattern own =
                    Pattern.compile("[\\[/]" + Pattern.quote(config + "-" + profile) + "\\.(yml|yaml|properties)]");
            return loaded.stream().anyMatch(name -> own.matcher(name).find());
        });
    }
}
