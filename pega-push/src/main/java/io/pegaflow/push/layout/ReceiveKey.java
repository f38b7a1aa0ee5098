package io.pegaflow.push.layout;

import java.security.MessageDigest;
import java.security.SecureRandom;

/**
 * What names a receive between servers: its id, which is not secret (the decode worker holds it to cancel, and logs
 * may show it), and a 16-byte secret that only the receive's handshake carries. LayerArrived, PushFailed and
 * WatchReceive must present the secret: a caller who learned the id alone can neither complete a receive that nothing
 * filled nor fail one (decision 0022).
 */
public record ReceiveKey(long id, byte[] secret) {
    /** Bytes of a secret: 128 bits, beyond guessing within any receive's lifetime. */
    public static final int SECRET_BYTES = 16;

    public ReceiveKey {
        secret = secret.clone();
    }

    /** A fresh key with {@code id} and a secret from {@code random}. */
    public static ReceiveKey of(long id, SecureRandom random) {
        byte[] s = new byte[SECRET_BYTES];
        random.nextBytes(s);
        return new ReceiveKey(id, s);
    }

    @Override
    public byte[] secret() {
        return secret.clone();
    }

    /** Whether {@code presented} is this key's secret; constant time in its content, so it leaks no prefix. */
    public boolean admits(byte[] presented) {
        return presented.length == SECRET_BYTES && MessageDigest.isEqual(secret, presented);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ReceiveKey k && k.id == id && MessageDigest.isEqual(k.secret, secret);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(id);
    }

    @Override
    public String toString() {
        return "receive " + Long.toUnsignedString(id); // never the secret
    }
}
