package io.pegaflow.server.config;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.boot.context.properties.ConfigurationPropertiesBinding;
import org.springframework.core.convert.converter.Converter;
import org.springframework.stereotype.Component;
import org.springframework.util.unit.DataSize;

/**
 * Sizes in every {@code pega.*} key accept the IEC spellings too: {@code 16MiB} is {@code 16MB}, both 16 × 2^20
 * bytes, as Spring's {@link DataSize} reads {@code MB}; the load generator takes the same units.
 */
@Component
@ConfigurationPropertiesBinding
class SizeConverter implements Converter<String, DataSize> {
    private static final Pattern SIZE = Pattern.compile("^([+-]?\\d+)\\s*(?:([KMGT])I?)?(B)?$");

    @Override
    public DataSize convert(String source) {
        Matcher m = SIZE.matcher(source.trim().toUpperCase(Locale.ROOT));
        if (!m.matches() || (m.group(2) != null && m.group(3) == null)) {
            // Not ours to reinterpret: Spring's own parser names what it expects.
            return DataSize.parse(source.trim());
        }
        return DataSize.parse(m.group(1) + (m.group(2) == null ? (m.group(3) == null ? "" : "B") : m.group(2) + "B"));
    }
}
