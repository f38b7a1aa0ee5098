package io.pegaflow.server.internode;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The engine's way into the client: never blocks, counts every hash it drops, folds what it hands over. */
@Timeout(10)
class AnnouncementQueueTest {
    private final MetaserverClientStats stats = new MetaserverClientStats();

    private static byte[] h(int i) {
        return new byte[] {(byte) i, 1, 2, 3};
    }

    @Test
    void shouldCountQueuedHashesAndDropWhatDoesNotFit() {
        AnnouncementQueue queue = new AnnouncementQueue(2, stats);

        queue.offer(new Announcement.Sealed("ns", List.of(h(1), h(2))));
        queue.offer(new Announcement.Evicted("ns", List.of(h(3))));
        queue.offer(new Announcement.Sealed("ns", List.of(h(4), h(5), h(6)))); // full
        queue.offer(new Announcement.Evicted("ns", List.of(h(7)))); // full
        queue.offer(new Announcement.Sealed("ns", List.of())); // nothing to announce

        assertThat(stats.registrationBlocks()).isEqualTo(2);
        assertThat(stats.removalBlocks()).isEqualTo(1);
        assertThat(stats.registrationQueueFull()).isEqualTo(3);
        assertThat(stats.removalQueueFull()).isEqualTo(1);
    }

    @Test
    void shouldFoldADrainIntoOneNetBatchPerNamespace() {
        AnnouncementQueue queue = new AnnouncementQueue(8, stats);
        queue.offer(new Announcement.Sealed("a", List.of(h(1), h(2))));
        queue.offer(new Announcement.Sealed("b", List.of(h(1))));
        queue.offer(new Announcement.Evicted("a", List.of(h(2)))); // sealed then evicted: only removed

        Optional<CommandBatch> batch = queue.drain();

        assertThat(batch).isPresent();
        assertThat(batch.get().inserts())
                .isEqualTo(Map.of("a", List.of(ByteString.copyFrom(h(1))), "b", List.of(ByteString.copyFrom(h(1)))));
        assertThat(batch.get().removes()).isEqualTo(Map.of("a", List.of(ByteString.copyFrom(h(2)))));
        assertThat(queue.drain()).isEmpty();
    }

    @Test
    void shouldDropAndCountEverythingAfterClose() {
        AnnouncementQueue queue = new AnnouncementQueue(8, stats);
        queue.offer(new Announcement.Sealed("ns", List.of(h(1))));

        assertThat(queue.close())
                .as("queued announcements dropped by the close")
                .isEqualTo(1);
        queue.offer(new Announcement.Sealed("ns", List.of(h(2), h(3))));

        assertThat(stats.registrationQueueFull()).isEqualTo(2);
        assertThat(queue.drain()).isEmpty();
    }
}
