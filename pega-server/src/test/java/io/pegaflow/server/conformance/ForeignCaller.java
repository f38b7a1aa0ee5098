package io.pegaflow.server.conformance;

import io.grpc.StatusRuntimeException;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.LoadRequest;
import io.pegaflow.proto.QueryRequest;
import io.pegaflow.proto.RegisterContextRequest;
import io.pegaflow.proto.SaveRequest;
import io.pegaflow.proto.SessionRequest;
import io.pegaflow.proto.UnregisterRequest;
import io.pegaflow.proto.ext.push.CancelReceiveRequest;
import io.pegaflow.proto.ext.push.LayerArrivedRequest;
import io.pegaflow.proto.ext.push.PdPushGrpc;
import io.pegaflow.proto.ext.push.PrepareReceiveRequest;
import io.pegaflow.proto.ext.push.PushFailedRequest;
import io.pegaflow.proto.ext.push.RegisterPushLayersRequest;
import io.pegaflow.proto.ext.push.StartPushRequest;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.SessionHandle;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.TimeUnit;

/**
 * A gRPC client in a process of another user (started by {@link ForeignProcess} as uid {@value ForeignProcess#UID}):
 * the hostile tenant of decision 0011, defect 6. Its arguments are {@code host port method:base64-request...}; it sends
 * each request (Engine RPCs, and PdPush ones named {@code pd-*}) with a 10 s deadline and prints
 * {@code RESULT <method> <CODE> <description>}, or {@code RESULT session OPEN} for a Session the server accepted, which
 * it holds until its standard input ends. Then it prints {@code DONE}.
 */
public final class ForeignCaller {
    private ForeignCaller() {}

    /** {@code OPEN} once the server accepted the stream, its code and description once it refused it (10 s at most). */
    private static String answer(SessionHandle session) {
        for (int i = 0; i < 100; i++) {
            if (session.awaitHeaders(Duration.ofMillis(50))) {
                return "OPEN";
            }
            var closed = session.awaitClosed(Duration.ofMillis(50));
            if (closed.isPresent()) {
                return closed.get().getCode() + " " + closed.get().getDescription();
            }
        }
        return "NO-ANSWER";
    }

    /** The P/D push service on the same connection (the server serves it beside Engine when pega.pd.enabled). */
    private static PdPushGrpc.PdPushBlockingStub pd(MockScheduler client) {
        return PdPushGrpc.newBlockingStub(client.channel()).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    public static void main(String[] args) throws IOException {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        try (MockScheduler client = MockScheduler.connect(args[0], Integer.parseInt(args[1]))) {
            for (int i = 2; i < args.length; i++) {
                int colon = args[i].indexOf(':');
                String method = args[i].substring(0, colon);
                byte[] request = Base64.getDecoder().decode(args[i].substring(colon + 1));
                if (method.equals("session")) {
                    SessionRequest r = SessionRequest.parseFrom(request);
                    SessionHandle session =
                            client.openSession(r.getInstanceId(), r.getNamespace(), r.getTpSize(), r.getWorldSize());
                    out.println("RESULT session " + answer(session));
                    continue;
                }
                EngineGrpc.EngineBlockingStub stub = client.stub().withDeadlineAfter(10, TimeUnit.SECONDS);
                try {
                    switch (method) {
                        case "register" -> stub.registerContextBatch(RegisterContextRequest.parseFrom(request));
                        case "save" -> stub.save(SaveRequest.parseFrom(request));
                        case "load" -> stub.load(LoadRequest.parseFrom(request));
                        case "query" -> stub.queryPrefetch(QueryRequest.parseFrom(request));
                        case "unregister" -> stub.unregisterContext(UnregisterRequest.parseFrom(request));
                        case "pd-register" ->
                            pd(client).registerPushLayers(RegisterPushLayersRequest.parseFrom(request));
                        case "pd-prepare" -> pd(client).prepareReceive(PrepareReceiveRequest.parseFrom(request));
                        case "pd-start" -> pd(client).startPush(StartPushRequest.parseFrom(request));
                        case "pd-cancel" -> pd(client).cancelReceive(CancelReceiveRequest.parseFrom(request));
                        case "pd-arrived" -> pd(client).layerArrived(LayerArrivedRequest.parseFrom(request));
                        case "pd-failed" -> pd(client).pushFailed(PushFailedRequest.parseFrom(request));
                        default -> throw new IllegalArgumentException(method);
                    }
                    out.println("RESULT " + method + " OK");
                } catch (StatusRuntimeException e) {
                    out.println("RESULT " + method + " " + e.getStatus().getCode() + " "
                            + e.getStatus().getDescription());
                }
            }
            out.println("DONE");
            InputStream in = System.in;
            while (in.read() >= 0) {
                // hold the Sessions until the test closes our standard input
            }
        }
    }
}
