package io.pegaflow.server.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.codec.http2.Http2StreamFrame;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;

/**
 * Connectors from pegaflow-llm 0.23.1 on PING every 5 s, also while idle (upstream {@code novitalabs/pegaflow}
 * {@code pegaflow-common/src/grpc.rs}, commit {@code d3ed31a}). grpc-java's client cannot ping faster than every 10 s,
 * so this test speaks HTTP/2 itself: it pings an idle connection at the connector's rate, then makes a Health call on
 * the same connection. Under grpc-java's default server policy (5 min, no pings without calls) the third early ping
 * earns GOAWAY {@code ENHANCE_YOUR_CALM}; the server's shipped settings (application.yml, not overridden here) must
 * let all of them through.
 */
@Timeout(60)
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.NONE,
        properties = {"spring.grpc.server.port=0", "pega.pool.size=4MB", "pega.device.backend=host"})
class ConnectorKeepaliveTest {
    private static final Duration CONNECTOR_PING_INTERVAL = Duration.ofSeconds(5);
    private static final int IDLE_PINGS = 3;

    @Autowired
    GrpcPort grpcPort;

    @Autowired
    Environment environment;

    @Test
    void shouldPermitTheConnectorsKeepaliveRate() {
        Duration permit = environment.getProperty("spring.grpc.server.keep-alive.permit-time", Duration.class);
        assertThat(permit).isNotNull().isLessThanOrEqualTo(CONNECTOR_PING_INTERVAL);
        assertThat(environment.getProperty("spring.grpc.server.keep-alive.permit-without-calls", Boolean.class))
                .isTrue();
    }

    @Test
    void shouldAnswerACallAfterIdlePingsEveryFiveSeconds() throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            ConnectionWatch watch = new ConnectionWatch(IDLE_PINGS);
            Channel connection = new Bootstrap()
                    .group(group)
                    .channel(NioSocketChannel.class)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline()
                                    .addLast(Http2FrameCodecBuilder.forClient().build())
                                    .addLast(new Http2MultiplexHandler(new ChannelInboundHandlerAdapter()))
                                    .addLast(watch);
                        }
                    })
                    .connect("127.0.0.1", grpcPort.port())
                    .sync()
                    .channel();
            watch.schedulePing(connection, 0);
            boolean allAcked = watch.awaitLastAck();
            assertThat(watch.goAway()).as("GOAWAY while idle").isNull();
            assertThat(allAcked).as("acks of %d idle pings", IDLE_PINGS).isTrue();

            // grpc-java acks the ping that breaks its policy and sends GOAWAY right after: the call is what tells.
            String status;
            try {
                status = health(connection);
            } catch (Exception e) {
                throw new AssertionError("Health after idle pings failed; GOAWAY: " + watch.goAway(), e);
            }
            assertThat(status).isEqualTo("0");
            assertThat(watch.goAway()).as("GOAWAY after the call").isNull();
            connection.close().sync();
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    /** One unary {@code pegaflow.Engine/Health} call on a new stream of {@code connection}; returns grpc-status. */
    private String health(Channel connection) throws Exception {
        CompletableFuture<String> status = new CompletableFuture<>();
        Http2StreamChannel stream = new Http2StreamChannelBootstrap(connection)
                .handler(new SimpleChannelInboundHandler<Http2StreamFrame>() {
                    @Override
                    protected void channelRead0(ChannelHandlerContext ctx, Http2StreamFrame frame) {
                        if (frame instanceof Http2HeadersFrame headers && headers.isEndStream()) {
                            CharSequence code = headers.headers().get("grpc-status");
                            status.complete(code == null ? "none" : code.toString());
                        }
                    }
                })
                .open()
                .sync()
                .getNow();
        Http2Headers headers = new DefaultHttp2Headers()
                .method("POST")
                .scheme("http")
                .path("/pegaflow.Engine/Health")
                .authority("127.0.0.1:" + grpcPort.port())
                .add("content-type", "application/grpc")
                .add("te", "trailers");
        ChannelFuture headersSent = stream.write(new DefaultHttp2HeadersFrame(headers));
        // An empty HealthRequest: uncompressed flag 0, length 0.
        stream.writeAndFlush(new DefaultHttp2DataFrame(Unpooled.wrappedBuffer(new byte[5]), true))
                .sync();
        headersSent.sync();
        return status.get(10, TimeUnit.SECONDS);
    }

    /**
     * Pings as the connector's HTTP/2 client does (the next ping one interval after the previous answer), counts the
     * acks and keeps the first GOAWAY the server sends on the connection.
     */
    private static final class ConnectionWatch extends ChannelInboundHandlerAdapter {
        private final int pings;
        private final CountDownLatch acked;
        private final AtomicReference<@Nullable String> goAway = new AtomicReference<>();

        ConnectionWatch(int pings) {
            this.pings = pings;
            this.acked = new CountDownLatch(pings);
        }

        void schedulePing(Channel connection, long id) {
            Runnable ping = () -> {
                var unused = connection.writeAndFlush(new DefaultHttp2PingFrame(id));
            };
            var unused =
                    connection.eventLoop().schedule(ping, CONNECTOR_PING_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
        }

        @Override
        public boolean isSharable() {
            return true;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof Http2PingFrame ping && ping.ack()) {
                    acked.countDown();
                    if (ping.content() + 1 < pings) {
                        schedulePing(ctx.channel(), ping.content() + 1);
                    }
                } else if (msg instanceof Http2GoAwayFrame frame) {
                    goAway.compareAndSet(
                            null,
                            "error " + frame.errorCode() + ": "
                                    + frame.content().toString(StandardCharsets.UTF_8));
                    while (acked.getCount() > 0) {
                        acked.countDown(); // no ack will come: the waiting test reads the GOAWAY now
                    }
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        boolean awaitLastAck() throws InterruptedException {
            return acked.await(CONNECTOR_PING_INTERVAL.toSeconds() * (pings + 2), TimeUnit.SECONDS);
        }

        @Nullable
        String goAway() {
            return goAway.get();
        }
    }
}
