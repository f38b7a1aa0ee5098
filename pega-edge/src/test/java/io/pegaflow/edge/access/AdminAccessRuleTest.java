package io.pegaflow.edge.access;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.mock.web.MockHttpServletRequest;

/** The admin rule without a server: who counts as local, and which Authorization values match the token. */
@Timeout(30)
class AdminAccessRuleTest {
    private static final SocketAddress LOOPBACK = peer(127, 0, 0, 1);
    private static final SocketAddress LOOPBACK_V6 = peer(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1);
    private static final SocketAddress REMOTE = peer(10, 1, 2, 3);

    private static SocketAddress peer(int... octets) {
        byte[] address = new byte[octets.length];
        for (int i = 0; i < octets.length; i++) {
            address[i] = (byte) octets[i];
        }
        try {
            return new InetSocketAddress(InetAddress.getByAddress(address), 40000);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }

    /** Stands for in-process and Unix-domain transports: not an inet address, cannot leave the host. */
    private static final class LocalTransport extends SocketAddress {
        private static final long serialVersionUID = 1L;
    }

    private final AdminAccess withToken = new AdminAccess("s3cret");
    private final AdminAccess withoutToken = new AdminAccess("");

    @Test
    void shouldAdmitLocalPeersWithoutATokenOnlyOnALoopbackListener() {
        assertThat(withoutToken.permits(LOOPBACK, true, null)).isTrue();
        assertThat(withoutToken.permits(LOOPBACK_V6, true, null)).isTrue();
        assertThat(withoutToken.permits(new LocalTransport(), false, null))
                .as("in-process: no listener at all")
                .isTrue();
        assertThat(withoutToken.permits(LOOPBACK, false, null))
                .as("a loopback peer of a 0.0.0.0 listener")
                .isFalse();
        assertThat(withToken.permits(LOOPBACK, false, null)).isFalse();
        assertThat(withToken.permits(LOOPBACK, false, "Bearer s3cret")).isTrue();
        assertThat(withoutToken.permits(REMOTE, true, null)).isFalse();
    }

    @Test
    void shouldTreatAnUnknownPeerAsRemote() {
        assertThat(withoutToken.permits(null, true, null)).isFalse();
        assertThat(withToken.permits(null, true, "Bearer s3cret")).isTrue();
    }

    @Test
    void shouldTellALoopbackBindFromOthers() {
        assertThat(AdminAccess.isLoopbackBind("127.0.0.1")).isTrue();
        assertThat(AdminAccess.isLoopbackBind("::1")).isTrue();
        assertThat(AdminAccess.isLoopbackBind("localhost")).isTrue();
        assertThat(AdminAccess.isLoopbackBind("0.0.0.0")).isFalse();
        assertThat(AdminAccess.isLoopbackBind("*")).isFalse();
        assertThat(AdminAccess.isLoopbackBind(null)).isFalse();
        assertThat(AdminAccess.isLoopbackBind("10.1.2.3")).isFalse();
    }

    @Test
    void shouldAdmitARemotePeerOnlyWithTheExactBearerValue() {
        assertThat(withToken.permits(REMOTE, false, "Bearer s3cret")).isTrue();
        assertThat(withToken.permits(REMOTE, false, null)).isFalse();
        assertThat(withToken.permits(REMOTE, false, "s3cret"))
                .as("the scheme is part of the value")
                .isFalse();
        assertThat(withToken.permits(REMOTE, false, "Bearer s3cre")).isFalse();
        assertThat(withToken.permits(REMOTE, false, "Bearer s3cret ")).isFalse();
        assertThat(withToken.permits(REMOTE, false, "bearer s3cret")).isFalse();
    }

    @Test
    void shouldRefuseEveryRemoteCallerWhenNoTokenIsConfigured() {
        assertThat(withoutToken.tokenConfigured()).isFalse();
        assertThat(withoutToken.permits(REMOTE, false, "Bearer ")).isFalse();
        assertThat(withoutToken.permits(REMOTE, false, "")).isFalse();
    }

    @Test
    void shouldJudgeHttpByTheRecordedSocketPeerNotByForwardingHeaders() {
        MockHttpServletRequest forged = new MockHttpServletRequest();
        forged.setRemoteAddr("127.0.0.1"); // what RemoteIpValve would make of X-Forwarded-For: 127.0.0.1
        forged.addHeader("X-Forwarded-For", "127.0.0.1");
        forged.setAttribute(SocketPeerValve.ATTRIBUTE, "10.1.2.3");
        forged.setAttribute(SocketPeerValve.LOOPBACK_LISTENER, true);
        assertThat(withoutToken.permits(forged)).isFalse();

        MockHttpServletRequest local = new MockHttpServletRequest();
        local.setRemoteAddr("10.9.9.9");
        local.setAttribute(SocketPeerValve.ATTRIBUTE, "127.0.0.1");
        assertThat(withoutToken.permits(local))
                .as("no listener recorded: not loopback-only")
                .isFalse();
        local.setAttribute(SocketPeerValve.LOOPBACK_LISTENER, true);
        assertThat(withoutToken.permits(local)).isTrue();
    }

    @Test
    void shouldTreatARequestThatBypassedTheValveAsRemote() {
        MockHttpServletRequest request = new MockHttpServletRequest();
        request.setRemoteAddr("127.0.0.1");
        assertThat(withoutToken.permits(request)).isFalse();
        request.addHeader("Authorization", "Bearer s3cret");
        assertThat(withToken.permits(request)).isTrue();
    }

    @Test
    void shouldLetACallerOnThisHostReadThroughAnyListener() {
        MockHttpServletRequest local = new MockHttpServletRequest();
        local.setAttribute(SocketPeerValve.ATTRIBUTE, "127.0.0.1");
        local.setAttribute(SocketPeerValve.LOOPBACK_LISTENER, false);
        assertThat(withToken.permitsRead(local))
                .as("a listener on all interfaces")
                .isTrue();
        assertThat(withoutToken.permitsRead(local)).isTrue();
        assertThat(withToken.permits(local))
                .as("while its mutations still need the token")
                .isFalse();

        MockHttpServletRequest remote = new MockHttpServletRequest();
        remote.setRemoteAddr("127.0.0.1"); // a forwarding header's claim
        remote.addHeader("X-Forwarded-For", "127.0.0.1");
        remote.setAttribute(SocketPeerValve.ATTRIBUTE, "10.1.2.3");
        assertThat(withToken.permitsRead(remote)).isFalse();
        assertThat(withoutToken.permitsRead(remote)).isFalse();
        remote.addHeader("Authorization", "Bearer s3cret");
        assertThat(withToken.permitsRead(remote)).isTrue();
        assertThat(withoutToken.permitsRead(remote))
                .as("no token configured: no remote reader")
                .isFalse();

        MockHttpServletRequest bypassed = new MockHttpServletRequest();
        bypassed.setRemoteAddr("127.0.0.1");
        assertThat(withoutToken.permitsRead(bypassed))
                .as("no recorded peer: remote")
                .isFalse();
    }

    @Test
    void shouldNeverResolveAHostNameAsThePeer() {
        assertThat(AdminAccess.literal("localhost")).isNull();
        assertThat(AdminAccess.literal("127.0.0.1")).isNotNull();
        assertThat(AdminAccess.literal("0:0:0:0:0:0:0:1")).isNotNull();
    }
}
