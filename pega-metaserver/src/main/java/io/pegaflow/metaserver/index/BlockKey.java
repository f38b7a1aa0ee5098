package io.pegaflow.metaserver.index;

import com.google.protobuf.ByteString;

/**
 * {@code (namespace, hash)}: the identity of one KV block in the index. The namespace is opaque (the connector
 * derives it from model and layout); the hash is kept as the request's {@link ByteString}, which gRPC's parser
 * copies out of the message buffer, so a stored key never pins a request.
 */
record BlockKey(String namespace, ByteString hash) {

    @Override
    public int hashCode() {
        // ByteString caches its hash; the namespace is mixed in so equal hashes of two models spread apart.
        return hash.hashCode() * 31 + namespace.hashCode();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof BlockKey key && hash.equals(key.hash) && namespace.equals(key.namespace);
    }
}
