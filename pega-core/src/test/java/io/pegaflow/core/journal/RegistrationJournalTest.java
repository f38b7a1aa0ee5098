package io.pegaflow.core.journal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.engine.RegisterCommand;
import io.pegaflow.core.instance.Connector;
import io.pegaflow.core.instance.ConnectorGeneration;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The registration journal on real files: durability of what was accepted, and every way its file can be wrong. */
@Timeout(60)
class RegistrationJournalTest {
    @TempDir
    Path tmp;

    private Path dir() {
        return tmp.resolve("state");
    }

    private Path file() {
        return dir().resolve(RegistrationJournal.FILE_NAME);
    }

    static RegisterCommand command(String instance, int device, String wrapper, OptionalInt uid) {
        return RegisterCommand.inProcess(
                instance,
                "ns-" + instance,
                device,
                2,
                2,
                device,
                3,
                0,
                List.of("layer_a", "layer_b"),
                List.of(wrapper.getBytes(StandardCharsets.UTF_8), new byte[] {(byte) 0x80, 4, 0, (byte) 0xff}),
                new long[] {16, 17},
                new long[] {4096, 8192},
                new long[] {0, 1 << 20},
                new long[] {1, 2},
                uid);
    }

    /** RegisterCommand holds arrays, so records compare by reference: compare what each field says instead. */
    static String describe(RegisterCommand c) {
        StringBuilder b = new StringBuilder();
        b.append(c.instanceId())
                .append('|')
                .append(c.namespace())
                .append('|')
                .append(c.tpRank())
                .append('|');
        b.append(c.tpSize())
                .append('|')
                .append(c.worldSize())
                .append('|')
                .append(c.deviceId())
                .append('|');
        b.append(c.numLayers())
                .append('|')
                .append(c.ppRank())
                .append('|')
                .append(c.layerNames())
                .append('|');
        c.wrapperBytes().forEach(w -> b.append(Arrays.toString(w)));
        b.append('|').append(Arrays.toString(c.numBlocks())).append(Arrays.toString(c.bytesPerBlock()));
        b.append(Arrays.toString(c.kvStrideBytes()))
                .append(Arrays.toString(c.segments()))
                .append(c.callerUid())
                .append(c.connector());
        return b.toString();
    }

    private static List<String> described(List<RegisterCommand> commands) {
        return commands.stream().map(RegistrationJournalTest::describe).toList();
    }

    @Test
    void shouldKeepAcceptedRegistrationsAndForgetEndedInstancesAcrossReopen() throws IOException {
        RegisterCommand a0 = command("a", 0, "{\"kind\":\"host-shm\"}", OptionalInt.of(1234));
        RegisterCommand a1 = command("a", 1, "second", OptionalInt.of(1234));
        RegisterCommand b0 = command("b", 0, "other", OptionalInt.empty());
        RegisterCommand c0 = command("c", 0, "third", OptionalInt.of(0));
        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            assertThat(j.recovery().registrations()).isEmpty();
            j.registered(a0);
            j.registered(b0);
            j.registered(a1);
            j.registered(c0);
            j.removed("b");
        }

        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            assertThat(described(j.recovery().registrations()))
                    .as("every field, the wrapper bytes and the caller uid included, in acceptance order")
                    .containsExactly(describe(a0), describe(a1), describe(c0));
            assertThat(j.recovery().droppedTailBytes()).isZero();
            assertThat(j.recovery().setAside()).isNull();
            assertThat(j.instanceIds()).containsExactly("a", "c");
        }
    }

    @Test
    void shouldKeepTheConnectorOfEachRegistration() throws IOException {
        RegisterCommand base = command("g3", 0, "w", OptionalInt.of(7));
        Connector g3 = new Connector("0.23.12", ConnectorGeneration.G3, true, true);
        RegisterCommand withConnector = new RegisterCommand(
                base.instanceId(),
                base.namespace(),
                base.tpRank(),
                base.tpSize(),
                base.worldSize(),
                base.deviceId(),
                0,
                base.ppRank(),
                base.layerNames(),
                base.wrapperBytes(),
                base.numBlocks(),
                base.bytesPerBlock(),
                base.kvStrideBytes(),
                base.segments(),
                base.callerUid(),
                base.principal(),
                g3,
                new int[0]);
        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            j.registered(withConnector);
        }

        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            assertThat(j.recovery().registrations())
                    .singleElement()
                    .satisfies(c -> assertThat(c.connector()).isEqualTo(g3));
        }
    }

    @Test
    void shouldReadAVersionOneRegistrationAsTheReferenceConnector() throws IOException {
        RegisterCommand c = command("old", 0, "w", OptionalInt.empty());
        byte[] payload = JournalFormat.register(c);
        // Version 1 ended the record at the caller uid: drop the connector section (generation, empty version, flags)
        // and version 3's group count.
        byte[] v1 = Arrays.copyOf(payload, payload.length - 10);
        ByteBuffer header = ByteBuffer.allocate(JournalFormat.HEADER_BYTES);
        header.put(JournalFormat.MAGIC).putInt(1).putInt(0);
        Files.createDirectories(dir());
        Files.write(file(), concat(header.array(), JournalFormat.frame(JournalFormat.REGISTER, v1)));

        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            assertThat(j.recovery().droppedTailBytes()).isZero();
            assertThat(j.recovery().registrations())
                    .singleElement()
                    .satisfies(r -> assertThat(r.connector()).isEqualTo(Connector.LEGACY));
        }
    }

    @Test
    void shouldKeepEachLayersStorageGroup() throws IOException {
        RegisterCommand base = command("hybrid", 0, "attn", OptionalInt.of(5));
        RegisterCommand hybrid = new RegisterCommand(
                base.instanceId(),
                base.namespace(),
                base.tpRank(),
                base.tpSize(),
                base.worldSize(),
                base.deviceId(),
                0,
                base.ppRank(),
                base.layerNames(),
                base.wrapperBytes(),
                base.numBlocks(),
                base.bytesPerBlock(),
                base.kvStrideBytes(),
                base.segments(),
                base.callerUid(),
                base.principal(),
                new Connector("0.25.1", ConnectorGeneration.G3, false, false),
                new int[] {0, 7});
        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            j.registered(hybrid);
        }

        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            assertThat(j.recovery().registrations())
                    .singleElement()
                    .satisfies(c -> assertThat(c.layerGroupIds()).containsExactly(0, 7));
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void shouldCreateTheDirectoryAndFileForTheOwnerOnly() throws IOException {
        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            j.registered(command("a", 0, "x", OptionalInt.of(1)));
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir())))
                .isEqualTo("rwx------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file())))
                .isEqualTo("rw-------");
    }

    @Test
    void shouldDropATornTailAndKeepTheRecordsBeforeIt() throws IOException {
        RegisterCommand a = command("a", 0, "kept", OptionalInt.of(7));
        long sizeAfterA;
        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            j.registered(a);
            sizeAfterA = j.sizeBytes();
            j.registered(command("b", 0, "torn", OptionalInt.of(7)));
        }
        long full = Files.size(file());
        truncate(file(), full - 5); // the process died in the middle of the second record

        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            assertThat(described(j.recovery().registrations())).containsExactly(describe(a));
            assertThat(j.recovery().droppedTailBytes()).isEqualTo(full - 5 - sizeAfterA);
            assertThat(Files.size(file()))
                    .as("rewritten without the tail, so new records follow valid ones")
                    .isEqualTo(sizeAfterA);
            j.registered(command("c", 0, "after", OptionalInt.of(7)));
        }
        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            assertThat(j.instanceIds()).containsExactly("a", "c");
            assertThat(j.recovery().droppedTailBytes()).isZero();
        }
    }

    @Test
    void shouldDropARecordWhoseCrcDoesNotMatchAndEverythingAfterIt() throws IOException {
        long sizeAfterA;
        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            j.registered(command("a", 0, "kept", OptionalInt.of(7)));
            sizeAfterA = j.sizeBytes();
            j.registered(command("b", 0, "flipped", OptionalInt.of(7)));
            j.registered(command("c", 0, "after the flip", OptionalInt.of(7)));
        }
        byte[] bytes = Files.readAllBytes(file());
        bytes[(int) sizeAfterA + JournalFormat.RECORD_HEADER_BYTES + 3] ^= 0x10; // inside b's payload
        Files.write(file(), bytes);

        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            assertThat(j.instanceIds()).containsExactly("a");
            assertThat(j.recovery().droppedTailBytes()).isEqualTo(bytes.length - sizeAfterA);
        }
    }

    @Test
    void shouldSetAsideAFileThatIsNoJournalAndStartEmpty() throws IOException {
        Files.createDirectories(dir());
        Files.write(file(), "not a journal at all, just text".getBytes(StandardCharsets.UTF_8));

        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            assertThat(j.recovery().registrations()).isEmpty();
            assertThat(j.recovery().setAside()).contains("magic");
            j.registered(command("a", 0, "fresh", OptionalInt.of(1)));
        }
        assertThat(Files.readString(dir().resolve(RegistrationJournal.SET_ASIDE_NAME)))
                .as("kept for the operator, not deleted")
                .startsWith("not a journal");
        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            assertThat(j.instanceIds()).containsExactly("a");
        }
    }

    @Test
    void shouldRefuseAJournalOfANewerFormatAndLeaveItUntouched() throws IOException {
        Files.createDirectories(dir());
        byte[] future = ByteBuffer.allocate(40)
                .put(JournalFormat.MAGIC)
                .putInt(JournalFormat.VERSION + 1)
                .putInt(0)
                .put(new byte[] {1, 2, 3})
                .array();
        Files.write(file(), future);

        assertThatThrownBy(() -> RegistrationJournal.open(dir()))
                .isInstanceOf(JournalVersionException.class)
                .hasMessageContaining("format version " + (JournalFormat.VERSION + 1))
                .hasMessageContaining("reads version " + JournalFormat.VERSION)
                .hasMessageContaining(file().toString());
        assertThat(Files.readAllBytes(file())).isEqualTo(future);
    }

    @Test
    void shouldNotFollowALinkPlantedAtTheJournalPath() throws IOException {
        Path victim = tmp.resolve("victim");
        Files.write(victim, "someone else's file".getBytes(StandardCharsets.UTF_8));
        Files.createDirectories(dir());
        Files.createSymbolicLink(file(), victim);

        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            assertThat(j.recovery().setAside()).contains("not a regular file");
            j.registered(command("a", 0, "x", OptionalInt.of(1)));
        }
        assertThat(Files.readString(victim)).isEqualTo("someone else's file");
        assertThat(Files.isSymbolicLink(file())).isFalse();
    }

    @Test
    void shouldReplaceALeftoverCompactionFileWithoutFollowingIt() throws IOException {
        Path victim = tmp.resolve("victim");
        Files.write(victim, "untouched".getBytes(StandardCharsets.UTF_8));
        Files.createDirectories(dir());
        Files.createSymbolicLink(dir().resolve(RegistrationJournal.COMPACT_NAME), victim);

        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            j.registered(command("a", 0, "x", OptionalInt.of(1)));
        }
        assertThat(Files.readString(victim)).isEqualTo("untouched");
        assertThat(Files.exists(dir().resolve(RegistrationJournal.COMPACT_NAME), LinkOption.NOFOLLOW_LINKS))
                .isFalse();
    }

    @Test
    void shouldCompactWhenEndedInstancesOutweighTheLiveOnes() throws IOException {
        try (RegistrationJournal j = RegistrationJournal.open(dir(), 4096)) {
            j.registered(command("stays", 0, "x", OptionalInt.of(1)));
            for (int i = 0; i < 200; i++) {
                j.registered(command("churn-" + i, 0, "y", OptionalInt.of(1)));
                j.removed("churn-" + i);
            }
            assertThat(j.compactions())
                    .as("the open's rewrite and then several")
                    .isGreaterThan(2);
            assertThat(j.sizeBytes()).isLessThanOrEqualTo(4096 + 400);
            assertThat(Files.size(file())).isEqualTo(j.sizeBytes());
        }
        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            assertThat(j.instanceIds()).containsExactly("stays");
        }
    }

    @Test
    void shouldAppendNothingForAnInstanceItNeverJournaled() throws IOException {
        try (RegistrationJournal j = RegistrationJournal.open(dir())) {
            long before = j.sizeBytes();
            j.removed("never-registered");
            assertThat(j.sizeBytes()).isEqualTo(before);
            assertThat(Files.size(file())).isEqualTo(before);
        }
    }

    @Test
    void shouldReportWorldWritableDirectoriesOnTheWayToTheStateDirectory() throws IOException {
        Path open = Files.createDirectories(tmp.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path state = open.resolve("state");

        assertThat(StateDirectory.prepare(state)).contains(open.toRealPath());
        assertThat(StateDirectory.prepare(Files.createDirectories(tmp.resolve("closed"))))
                .doesNotContain(tmp.resolve("closed").toRealPath());
    }

    @Test
    void shouldRefuseAStateDirectoryThatIsALinkOrBelongsToAnotherUser() throws IOException {
        Path target = Files.createDirectories(tmp.resolve("elsewhere"));
        Path link = Files.createSymbolicLink(tmp.resolve("linked-state"), target);
        assertThatThrownBy(() -> StateDirectory.prepare(link))
                .isInstanceOf(java.io.UncheckedIOException.class)
                .hasMessageContaining("state directory " + link + " cannot be used: it is a symbolic link");

        Path mine = Files.createDirectories(tmp.resolve("mine"));
        int me = io.pegaflow.core.device.ProcessUid.current();
        assertThat(StateDirectory.prepare(mine, me)).doesNotContain(mine.toRealPath());
        assertThatThrownBy(() -> StateDirectory.prepare(mine, me + 4242))
                .isInstanceOf(java.io.UncheckedIOException.class)
                .hasMessageContaining("it belongs to uid " + me + ", not to this server's user (uid " + (me + 4242));
    }

    private static void truncate(Path file, long size) throws IOException {
        try (var ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(size);
        }
    }
}
