package io.pegaflow.testkit;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * One HTTP/1.1 exchange over a plain socket to a loopback port, with exactly the headers given: what a browser page
 * or a rebinding name sends, which the JDK's HttpClient refuses to (it sets {@code Host} itself). A {@code Host}
 * header is added only when none is given. The answer is {@code "<status> <body>"}; 10 s deadline.
 */
public final class RawHttp {

    private RawHttp() {}

    public static String exchange(int port, String method, String path, String... headers) {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(10_000);
            StringBuilder request =
                    new StringBuilder(method).append(' ').append(path).append(" HTTP/1.1\r\n");
            boolean host = false;
            for (String h : headers) {
                host |= h.regionMatches(true, 0, "Host:", 0, 5);
                request.append(h).append("\r\n");
            }
            if (!host) {
                request.append("Host: 127.0.0.1:").append(port).append("\r\n");
            }
            request.append("Content-Length: 0\r\nConnection: close\r\n\r\n");
            OutputStream out = socket.getOutputStream();
            out.write(request.toString().getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            String response = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int bodyAt = response.indexOf("\r\n\r\n");
            return response.substring(9, 12) + " " + (bodyAt < 0 ? "" : response.substring(bodyAt + 4));
        } catch (IOException e) {
            throw new UncheckedIOException(method + " " + path + " to port " + port, e);
        }
    }
}
