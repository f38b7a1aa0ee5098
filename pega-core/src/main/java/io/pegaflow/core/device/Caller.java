package io.pegaflow.core.device;

import java.util.OptionalInt;

/**
 * Who asks a backend to open memory: the instance the registration is for, and the operating-system user of the
 * calling process when the transport could tell (a loopback connection, an in-process call).
 *
 * <p>The server opens worker memory with its own privileges. Without this, it would be a confused deputy: a worker
 * could name another tenant's shared-memory object and have the server read or overwrite it on its behalf.
 *
 * @param instanceId the registering instance
 * @param uid the caller's uid, empty when the transport cannot tell (a remote peer)
 */
public record Caller(String instanceId, OptionalInt uid) {

    /** A caller in this process (tests, benchmarks, in-process transports): this process's uid. */
    public static Caller inProcess(String instanceId) {
        return new Caller(instanceId, OptionalInt.of(ProcessUid.current()));
    }
}
