package io.pegaflow.server.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.device.ProcessUid;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The caller's uid as the kernel lists it for real loopback sockets, and none for a peer elsewhere. */
@Timeout(30)
class PeerUidTest {

    /** Stands for an in-process or Unix-domain peer: a socket address that is no network address. */
    private static final class LocalTransport extends SocketAddress {
        private static final long serialVersionUID = 1L;
    }

    private static OptionalInt uidOfAClientOn(InetAddress loopback) throws IOException {
        try (ServerSocket server = new ServerSocket(0, 1, loopback);
                Socket client = new Socket(loopback, server.getLocalPort());
                Socket accepted = server.accept()) {
            assertThat(client.isConnected()).isTrue();
            // The server sees the client's address as the peer: exactly what gRPC reports.
            return PeerUid.of(accepted.getRemoteSocketAddress());
        }
    }

    @Test
    void shouldFindTheUidOfALoopbackPeer() throws IOException {
        assertThat(uidOfAClientOn(InetAddress.getByAddress(new byte[] {127, 0, 0, 1})))
                .hasValue(ProcessUid.current());
    }

    @Test
    void shouldFindTheUidOfAnIpv6LoopbackPeer() throws IOException {
        assertThat(uidOfAClientOn(
                        InetAddress.getByAddress(new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})))
                .hasValue(ProcessUid.current());
    }

    @Test
    void shouldKnowNoUidForARemoteOrAbsentPeer() throws IOException {
        assertThat(PeerUid.of(new InetSocketAddress(InetAddress.getByAddress(new byte[] {(byte) 192, 0, 2, 7}), 40000)))
                .isEmpty();
        assertThat(PeerUid.of(new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, 1}), 1)))
                .as("no such socket")
                .isEmpty();
        assertThat(PeerUid.of(null)).isEmpty();
    }

    @Test
    void shouldTreatANonNetworkTransportAsThisProcess() {
        assertThat(PeerUid.of(new LocalTransport())).hasValue(ProcessUid.current());
    }
}
