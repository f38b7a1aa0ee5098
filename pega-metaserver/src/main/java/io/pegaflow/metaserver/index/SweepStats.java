package io.pegaflow.metaserver.index;

/** What one lifecycle sweep removed. */
public record SweepStats(long removedOwners, long removedKeys, long removedNodes) {

    public boolean isEmpty() {
        return removedOwners == 0 && removedKeys == 0 && removedNodes == 0;
    }
}
