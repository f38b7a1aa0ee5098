package io.pegaflow.server.config;

import jakarta.validation.constraints.NotNull;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * The cluster credential ({@code pega.cluster.*}, docs/security.md): a secret every server of one cluster shares.
 * Decode servers seal the P/D push handshakes they hand out with it, and prefill servers refuse a handshake whose seal
 * does not match, so a client cannot rewrite the staging or worker addresses in it (decision 0024).
 *
 * @param token the shared secret, at least 16 characters; empty (the default) seals and checks nothing, and a server
 *     with the push on says so at startup. Never logged.
 * @param sslBundle the Spring SSL bundle ({@code spring.ssl.bundle.*}) the server dials its peers, decode servers and
 *     the metaserver with: TLS, its key as the client certificate, its trust store as the CAs the other side's
 *     certificate must chain to; empty (the default) dials plaintext (decision 0031 §2)
 */
@Validated
@ConfigurationProperties("pega.cluster")
public record ClusterProperties(
        @NotNull @DefaultValue("") String token,
        @NotNull @DefaultValue("") String sslBundle) {

    @Override
    public String toString() {
        return "ClusterProperties[token=" + (token.isEmpty() ? "unset" : "set") + ", sslBundle=" + sslBundle + "]";
    }
}
