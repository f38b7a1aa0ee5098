package io.pegaflow.server.ssd;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Plain HTTP GETs against the management port, and reading one value out of a Prometheus scrape. */
final class SsdHttp {
    private static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private SsdHttp() {}

    /** The body, or null when the server does not answer (yet). */
    static String get(int port, String path) {
        try {
            HttpResponse<String> r = CLIENT.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                            .timeout(Duration.ofSeconds(5))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.body();
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

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
