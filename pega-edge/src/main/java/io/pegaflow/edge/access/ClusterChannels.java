package io.pegaflow.edge.access;

import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptor;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannelBuilder;
import io.grpc.TlsChannelCredentials;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslManagerBundle;

/**
 * How a server dials the rest of its cluster (peers, decode servers, the metaserver): plaintext, or TLS with the key
 * and trust material of a Spring SSL bundle ({@code pega.cluster.ssl-bundle}), whose key is then the client
 * certificate a listener with {@code spring.grpc.server.ssl.client-auth=require} asks for. Either way every call
 * carries the {@link ClusterCredential} when one is set. Host names are verified against the certificate, so a peer's
 * certificate must name the address the cluster dials it by (an IP SAN for an advertised IP).
 */
public final class ClusterChannels {
    private final ChannelCredentials credentials;
    private final ClientInterceptor credential;
    private final boolean tls;

    private ClusterChannels(ChannelCredentials credentials, ClusterCredential credential, boolean tls) {
        this.credentials = credentials;
        this.credential = credential.attach();
        this.tls = tls;
    }

    public static ClusterChannels plaintext(ClusterCredential credential) {
        return new ClusterChannels(InsecureChannelCredentials.create(), credential, false);
    }

    /** TLS with {@code bundle}'s key managers (the client certificate, if it has a key store) and trust managers. */
    public static ClusterChannels tls(SslBundle bundle, ClusterCredential credential) {
        SslManagerBundle managers = bundle.getManagers();
        ChannelCredentials tls = TlsChannelCredentials.newBuilder()
                .keyManager(managers.getKeyManagers())
                .trustManager(managers.getTrustManagers())
                .build();
        return new ClusterChannels(tls, credential, true);
    }

    /** A channel builder for {@code target} with these credentials and the cluster credential on every call. */
    public ManagedChannelBuilder<?> forTarget(String target) {
        return Grpc.newChannelBuilder(target, credentials).intercept(credential);
    }

    /** The transport credentials, for channel builders made elsewhere. */
    public ChannelCredentials credentials() {
        return credentials;
    }

    /** The interceptor that adds the cluster credential. */
    public ClientInterceptor credential() {
        return credential;
    }

    public boolean tls() {
        return tls;
    }

    @Override
    public String toString() {
        return tls ? "TLS" : "plaintext";
    }
}
