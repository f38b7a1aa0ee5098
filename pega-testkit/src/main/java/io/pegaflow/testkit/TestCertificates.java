package io.pegaflow.testkit;

import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The test-only certificates under {@code io/pegaflow/testkit/tls} (their README says how they were made): a cluster
 * CA with a leaf ({@link #NODE}) for both ends, and an unrelated CA with its own leaf ({@link #STRANGER}). Every leaf
 * names 127.0.0.1, ::1 and localhost.
 */
public final class TestCertificates {
    private static final String DIR = "io/pegaflow/testkit/tls/";

    /** A leaf the cluster CA signed. */
    public static final String NODE = "node";

    /** A leaf the rogue CA signed. */
    public static final String STRANGER = "stranger";

    /** The cluster's CA. */
    public static final String CLUSTER_CA = "cluster-ca";

    /** A CA nobody in the cluster trusts. */
    public static final String ROGUE_CA = "rogue-ca";

    private TestCertificates() {}

    /**
     * The {@code spring.ssl.bundle.pem.<bundle>} properties (as {@code --key=value} arguments) of a bundle whose key
     * is {@code leaf} and whose trust store is {@code ca}.
     */
    public static List<String> pemBundle(String bundle, String leaf, String ca) {
        String prefix = "--spring.ssl.bundle.pem." + bundle + ".";
        return List.of(
                prefix + "keystore.certificate=classpath:" + DIR + leaf + ".crt",
                prefix + "keystore.private-key=classpath:" + DIR + leaf + ".key",
                prefix + "truststore.certificate=classpath:" + DIR + ca + ".crt");
    }

    /** TLS client credentials trusting {@code ca}, presenting {@code leaf} (null: no client certificate). */
    public static ChannelCredentials client(@Nullable String leaf, String ca) {
        try (InputStream trust = open(ca + ".crt")) {
            TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder().trustManager(trust);
            if (leaf != null) {
                try (InputStream cert = open(leaf + ".crt");
                        InputStream key = open(leaf + ".key")) {
                    b.keyManager(cert, key);
                }
            }
            return b.build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static InputStream open(String name) {
        return Objects.requireNonNull(
                TestCertificates.class.getClassLoader().getResourceAsStream(DIR + name), () -> DIR + name);
    }
}
