package io.pegaflow.server.internode;

import java.util.List;

/**
 * One engine callback queued for the metaserver client's agent: a batch of one namespace's hashes that were sealed
 * (to insert) or evicted (to remove). The hash arrays are the engine's copies and are never modified.
 */
sealed interface Announcement permits Announcement.Sealed, Announcement.Evicted {

    String namespace();

    List<byte[]> hashes();

    /** Whether the metaserver must insert (sealed) or remove (evicted) these hashes. */
    boolean insert();

    record Sealed(String namespace, List<byte[]> hashes) implements Announcement {
        @Override
        public boolean insert() {
            return true;
        }
    }

    record Evicted(String namespace, List<byte[]> hashes) implements Announcement {
        @Override
        public boolean insert() {
            return false;
        }
    }
}
