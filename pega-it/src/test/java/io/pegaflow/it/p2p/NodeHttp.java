package io.pegaflow.it.p2p;

import io.pegaflow.testkit.ChildJvm;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.OptionalDouble;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A server's HTTP side as a test reads it: one Prometheus sample, an admin POST with the cluster's token. */
final class NodeHttp {
    static final String ADMIN_TOKEN = "p2p-it-admin-token";
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private NodeHttp() {}

    /** The value of the unlabelled sample {@code name} in {@code /metrics}, or empty when it is not there (yet). */
    static OptionalDouble metric(TwoNodeCluster.Node node, String name) {
        String text = ChildJvm.httpGet(node.localHttp(), "/metrics");
        if (text == null) {
            return OptionalDouble.empty();
        }
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(?:\\{[^}]*})? ([-+0-9.eE]+|NaN)$")
                .matcher(text);
        return m.find() ? OptionalDouble.of(Double.parseDouble(m.group(1))) : OptionalDouble.empty();
    }

    /**
     * The value of the sample {@code name} with the label {@code label="value"} (other labels allowed) in
     * {@code /metrics}, or empty when it is not there (yet).
     */
    static OptionalDouble metric(TwoNodeCluster.Node node, String name, String label, String value) {
        String text = ChildJvm.httpGet(node.localHttp(), "/metrics");
        if (text == null) {
            return OptionalDouble.empty();
        }
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{(?:[^}]*,)?" + Pattern.quote(label) + "=\""
                        + Pattern.quote(value) + "\"(?:,[^}]*)?} ([-+0-9.eE]+|NaN)$")
                .matcher(text);
        return m.find() ? OptionalDouble.of(Double.parseDouble(m.group(1))) : OptionalDouble.empty();
    }

    /** {@code POST path} with the admin token; the body of a 200 answer. */
    static String adminPost(TwoNodeCluster.Node node, String path) throws IOException, InterruptedException {
        HttpResponse<String> response = HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.localHttp() + path))
                        .timeout(Duration.ofSeconds(30))
                        .header("Authorization", "Bearer " + ADMIN_TOKEN)
                        .header("X-Pega-Request", "1")
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new AssertionError(
                    "POST " + path + " on " + node.name() + ": " + response.statusCode() + " " + response.body());
        }
        return response.body();
    }
}
