package io.pegaflow.server.ssd;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reading one value out of a Prometheus scrape. */
final class SsdHttp {
    private SsdHttp() {}

    /** The value of the first sample of {@code metric} (a full name, labels optional), or -1 when absent. */
    static double sample(String scrape, String metric) {
        if (scrape == null) {
            return -1;
        }
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(metric) + "(\\{[^}]*\\})? ([0-9.eE+-]+)$")
                .matcher(scrape);
        return m.find() ? Double.parseDouble(m.group(2)) : -1;
    }
}
