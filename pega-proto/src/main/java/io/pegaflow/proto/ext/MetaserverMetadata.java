package io.pegaflow.proto.ext;

import io.grpc.Metadata;

/**
 * The metadata names of our MetaServer extension (documented in {@code pegaflow/ext/metaserver_ext.proto}): the one
 * spelling of a wire contract shared by the metaserver, which sends them, and the server's metaserver client, which
 * reads them. Values are ASCII strings.
 */
public final class MetaserverMetadata {

    /** Response metadata carrying the metaserver's start epoch as a decimal ASCII string, on every MetaServer RPC. */
    public static final String EPOCH_HEADER = "pega-metaserver-epoch";

    /** Trailer set to {@value #FENCED_VALUE} when a request was refused because its node_id is fenced. */
    public static final String FENCED_TRAILER = "pega-metaserver-fenced";

    /** The value of {@link #FENCED_TRAILER} on a fenced refusal. */
    public static final String FENCED_VALUE = "true";

    /** {@link #EPOCH_HEADER} as a gRPC metadata key. */
    public static final Metadata.Key<String> EPOCH_KEY =
            Metadata.Key.of(EPOCH_HEADER, Metadata.ASCII_STRING_MARSHALLER);

    /** {@link #FENCED_TRAILER} as a gRPC metadata key. */
    public static final Metadata.Key<String> FENCED_KEY =
            Metadata.Key.of(FENCED_TRAILER, Metadata.ASCII_STRING_MARSHALLER);

    private MetaserverMetadata() {}
}
