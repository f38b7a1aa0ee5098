package io.pegaflow.it.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The harness itself: a pair is made whole, reaches across its veth, and is gone after one close however many. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NamespacePairIT {
    @BeforeAll
    static void namespacesAllowed() {
        Optional<String> why = NamespacePair.unavailable();
        assumeTrue(why.isEmpty(), () -> "network namespaces unavailable, harness tests skipped: " + why.get());
    }

    private static String namespaces() {
        return CommandLine.runOrThrow("ip", "netns", "list").output();
    }

    /** Listens on a's address inside namespace a, answers one connection with the bytes it got, reversed. */
    private static CompletableFuture<Integer> reverserIn(String namespace, CompletableFuture<Void> done) {
        CompletableFuture<Integer> port = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                Setns.enterNetworkNamespace(namespace);
                try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getByName(NamespacePair.ADDRESS_A))) {
                    listener.setSoTimeout(30_000);
                    port.complete(listener.getLocalPort());
                    try (Socket s = listener.accept()) {
                        byte[] got = s.getInputStream().readNBytes(4);
                        byte[] back = {got[3], got[2], got[1], got[0]};
                        s.getOutputStream().write(back);
                    }
                }
                done.complete(null);
            } catch (IOException | RuntimeException e) {
                port.completeExceptionally(e);
                done.completeExceptionally(e);
            }
        });
        t.setDaemon(true);
        t.start();
        return port;
    }

    @Test
    void shouldJoinTheTwoNamespacesAndRemoveThemExactlyOnce() throws Exception {
        NamespacePair pair = NamespacePair.create();
        try {
            assertThat(namespaces()).contains(pair.namespaceA(), pair.namespaceB());
            // A client in b reaches a listener on a's address over the veth; the root namespace has no such address.
            CompletableFuture<Void> served = new CompletableFuture<>();
            int port = reverserIn(pair.namespaceA(), served).get(10, TimeUnit.SECONDS);
            try (NamespaceTunnel fromB = NamespaceTunnel.open(pair.namespaceB(), NamespacePair.ADDRESS_A, port);
                    Socket s = new Socket(InetAddress.getLoopbackAddress(), fromB.localPort())) {
                s.setSoTimeout(10_000);
                s.getOutputStream().write(new byte[] {1, 2, 3, 4});
                assertThat(s.getInputStream().readNBytes(4)).containsExactly(4, 3, 2, 1);
            }
            served.get(10, TimeUnit.SECONDS);
            assertThat(CommandLine.runOrThrow("ip", "-o", "addr").output()).doesNotContain(NamespacePair.ADDRESS_A);
        } finally {
            pair.close();
        }
        pair.close();
        assertThat(namespaces()).doesNotContain(pair.namespaceA()).doesNotContain(pair.namespaceB());
    }

    @Test
    void shouldRemoveTheNamespacesOfADeadRunOnly() {
        long dead = deadPid();
        String crashed = "pgit-" + dead + "-1-a";
        String crashedProbe = "pgit-" + dead + "-probe";
        NamespacePair live = NamespacePair.create();
        CommandLine.runOrThrow("ip", "netns", "add", crashed);
        CommandLine.runOrThrow("ip", "netns", "add", crashedProbe);
        try {
            List<String> removed = NamespacePair.removeLeftovers();
            assertThat(removed).contains(crashed, crashedProbe).doesNotContain(live.namespaceA(), live.namespaceB());
            assertThat(namespaces())
                    .doesNotContain(crashed)
                    .doesNotContain(crashedProbe)
                    .contains(live.namespaceA());
        } finally {
            CommandLine.run(List.of("ip", "netns", "del", crashed));
            CommandLine.run(List.of("ip", "netns", "del", crashedProbe));
            live.close();
        }
    }

    /** A pid no process has now (the kernel's pid_max is at least 32768). */
    private static long deadPid() {
        for (long pid = 32_000; pid > 2; pid--) {
            if (ProcessHandle.of(pid).isEmpty()) {
                return pid;
            }
        }
        throw new AssertionError("every pid below 32000 is in use");
    }
}
