package io.pegaflow.server;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** The PegaFlow sidecar: serves {@code pegaflow.Engine} over gRPC and the operations endpoints over HTTP. */
@SpringBootApplication
@ConfigurationPropertiesScan
public class PegaServerApplication {

    public static void main(String[] args) {
        SpringApplication.run(PegaServerApplication.class, args);
    }
}
