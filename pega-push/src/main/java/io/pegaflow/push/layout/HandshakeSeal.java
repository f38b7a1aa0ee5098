package io.pegaflow.push.layout;

import io.pegaflow.core.error.EngineException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.jspecify.annotations.Nullable;

/**
 * Seals handshakes with the cluster credential ({@code pega.cluster.token}): the decode server signs every handshake
 * it hands out (HMAC-SHA256 over the handshake encoded with an empty seal), and a prefill server with the same
 * credential refuses a handshake whose seal does not match before it reads an address or hands a worker address to
 * UCX. The blob crosses two untrusted hops (the schedulers); without a seal a client could aim the prefill server's
 * puts at any address of the decode server, or make UCX abort the prefill server on a malformed worker address
 * (decision 0024).
 *
 * <p>Without a credential, handshakes go unsealed and unchecked, as before; the server says so at startup. Immutable
 * and thread-safe: each call gets its own {@link Mac}.
 */
public final class HandshakeSeal {
    private static final String ALGORITHM = "HmacSHA256";
    /** A credential shorter than this is refused at startup: it could be guessed. */
    public static final int MIN_TOKEN_CHARS = 16;

    private final @Nullable SecretKeySpec key;

    private HandshakeSeal(@Nullable SecretKeySpec key) {
        this.key = key;
    }

    /** No credential: handshakes are neither sealed nor checked. */
    public static HandshakeSeal none() {
        return new HandshakeSeal(null);
    }

    /**
     * A seal under {@code token}; blank means {@link #none()}.
     *
     * @throws IllegalArgumentException for a token shorter than {@link #MIN_TOKEN_CHARS}, naming the key
     */
    public static HandshakeSeal of(String token) {
        if (token.isBlank()) {
            return none();
        }
        if (token.length() < MIN_TOKEN_CHARS) {
            throw new IllegalArgumentException(
                    "pega.cluster.token: " + token.length() + " characters (expected: at least " + MIN_TOKEN_CHARS
                            + ", the same random value on every server of the cluster)");
        }
        return new HandshakeSeal(new SecretKeySpec(token.getBytes(StandardCharsets.UTF_8), ALGORITHM));
    }

    public boolean enabled() {
        return key != null;
    }

    /** {@code unsealed} with its seal set over its encoding by {@code codec} (unchanged without a credential). */
    public Handshake seal(Handshake unsealed, HandshakeCodec codec) {
        if (key == null) {
            return unsealed;
        }
        return unsealed.withSeal(mac(key, codec.encode(unsealed.withSeal(new byte[0]))));
    }

    /**
     * Checks a decoded handshake's seal over the bytes it covers (nothing without a credential).
     *
     * @throws EngineException INVALID_ARGUMENT when it is missing or does not match
     */
    public void check(HandshakeCodec.Decoded blob) {
        if (key == null) {
            return;
        }
        byte[] expected = mac(key, blob.sealedBytes());
        if (!MessageDigest.isEqual(expected, blob.handshake().seal())) {
            throw EngineException.invalidArgument("handshake: not sealed by a decode server of this cluster (its seal"
                    + " is missing or does not match: the blob was changed on its way, or the decode server has another"
                    + " pega.cluster.token)");
        }
    }

    private static byte[] mac(SecretKeySpec key, byte[] bytes) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            return mac.doFinal(bytes);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }

    @Override
    public String toString() {
        return key == null ? "no cluster credential" : "sealed with the cluster credential";
    }
}
