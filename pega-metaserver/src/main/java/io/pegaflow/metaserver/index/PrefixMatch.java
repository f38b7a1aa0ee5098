package io.pegaflow.metaserver.index;

/** One node's contiguous prefix of a queried hash list: it holds hashes {@code 0 .. prefixLen-1}. */
public record PrefixMatch(String node, int prefixLen) {}
