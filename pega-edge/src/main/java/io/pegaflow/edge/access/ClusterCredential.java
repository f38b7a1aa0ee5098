package io.pegaflow.edge.access;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.pegaflow.edge.rpc.EdgeInterceptor;
import io.pegaflow.edge.rpc.EdgeStage;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Set;

/**
 * The cluster credential on the wire ({@code pega.cluster.token}): servers of one cluster send it as call metadata on
 * the RPCs they make to each other, and a server with a credential refuses those RPCs from anyone who does not send it
 * (UNAUTHENTICATED), compared in constant time. The RPCs it guards take UCX worker addresses or end another node's
 * locks and receives: a caller outside the cluster must not reach UCX (a malformed worker address aborts the
 * process inside UCX) or stand in for a peer. Without a credential nothing is sent and nothing is checked.
 */
public final class ClusterCredential {
    /** The metadata key; its value is the token, and it never appears in a log line or an error. */
    public static final Metadata.Key<String> HEADER =
            Metadata.Key.of("x-pega-cluster-token", Metadata.ASCII_STRING_MARSHALLER);

    /** Shortest token accepted: a guessable credential protects nothing. */
    public static final int MIN_TOKEN_CHARS = 16;

    private final byte[] token;

    private ClusterCredential(String token) {
        this.token = token.getBytes(StandardCharsets.UTF_8);
    }

    /** The credential {@code token}; blank means none. */
    public static ClusterCredential of(String token) {
        return new ClusterCredential(token.strip());
    }

    /**
     * The credential {@code token}, checked: blank means none; a shorter one than {@link #MIN_TOKEN_CHARS} is refused.
     *
     * @throws IllegalArgumentException naming the key and the length (never the value)
     */
    public static ClusterCredential checked(String token) {
        String t = token.strip();
        if (!t.isEmpty() && t.length() < MIN_TOKEN_CHARS) {
            throw new IllegalArgumentException("pega.cluster.token: " + t.length() + " characters (expected: at least "
                    + MIN_TOKEN_CHARS + ", the same random value on every server of the cluster)");
        }
        return new ClusterCredential(t);
    }

    public boolean configured() {
        return token.length > 0;
    }

    /** Adds the credential to every call of a channel (nothing without one). */
    public ClientInterceptor attach() {
        String value = new String(token, StandardCharsets.UTF_8);
        return new ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(
                    MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
                return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<R> listener, Metadata headers) {
                        if (!value.isEmpty()) {
                            headers.put(HEADER, value);
                        }
                        super.start(listener, headers);
                    }
                };
            }
        };
    }

    /**
     * Refuses the calls of {@code guarded} (full method names) that do not carry the credential; passes everything
     * when none is configured.
     */
    public EdgeInterceptor require(Set<String> guarded) {
        return new EdgeInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(
                    ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                if (configured() && guarded.contains(call.getMethodDescriptor().getFullMethodName())) {
                    String presented = headers.get(HEADER);
                    byte[] bytes = presented == null ? new byte[0] : presented.getBytes(StandardCharsets.UTF_8);
                    if (!MessageDigest.isEqual(token, bytes)) {
                        call.close(
                                Status.UNAUTHENTICATED.withDescription(
                                        call.getMethodDescriptor().getBareMethodName()
                                                + " is for servers of this cluster: the call must carry pega.cluster.token"),
                                new Metadata());
                        return new ServerCall.Listener<>() {};
                    }
                }
                return next.startCall(call, headers);
            }

            @Override
            public EdgeStage stage() {
                return EdgeStage.REQUEST;
            }
        };
    }

    @Override
    public String toString() {
        return configured() ? "cluster credential set" : "no cluster credential";
    }
}
