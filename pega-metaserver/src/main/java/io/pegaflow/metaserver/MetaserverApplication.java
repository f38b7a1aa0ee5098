package io.pegaflow.metaserver;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * Entry point of the metaserver process: gRPC {@code pegaflow.MetaServer} plus HTTP health, metrics and nodes.
 *
 * <p>Its configuration files are named {@code metaserver.yml} (and {@code metaserver-<profile>.yml}) rather than
 * {@code application.yml}, so the jar can sit on another application's test classpath without either picking up the
 * other's settings. Operators add their own file with {@code --spring.config.additional-location=file:<path>}.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class MetaserverApplication {

    /** A builder with the metaserver's configuration name set; tests start (and restart) the process through it. */
    public static SpringApplicationBuilder builder() {
        return new SpringApplicationBuilder(MetaserverApplication.class).properties("spring.config.name=metaserver");
    }

    public static void main(String[] args) {
        builder().run(args);
    }
}
