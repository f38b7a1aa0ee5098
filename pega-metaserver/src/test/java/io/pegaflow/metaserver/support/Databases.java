package io.pegaflow.metaserver.support;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Assumptions;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/** Real databases for tests, migrated with the production Flyway scripts. */
public final class Databases {

    /** Environment variable naming a PostgreSQL server for the PostgreSQL tests (see .ci/postgres.sh). */
    public static final String POSTGRES_URL_ENV = "PEGA_TEST_POSTGRES_URL";

    private Databases() {}

    /** An H2 file database under {@code dir}, migrated. */
    public static DataSource h2File(Path dir) {
        return migrate(new DriverManagerDataSource(h2FileUrl(dir), "sa", ""));
    }

    public static String h2FileUrl(Path dir) {
        return "jdbc:h2:file:" + dir.resolve("metaserver").toAbsolutePath() + ";DB_CLOSE_ON_EXIT=FALSE";
    }

    /** Why the PostgreSQL tests skip, and how to run them: printed once per test JVM, since Surefire shows only a count. */
    public static final String SKIPPED = "PostgreSQL tests skipped: " + POSTGRES_URL_ENV + " is not set. Run them with"
            + " a local server: export " + POSTGRES_URL_ENV + "=\"$(bash .ci/postgres.sh)\" && ./mvnw -B -ntp verify"
            + " -pl pega-metaserver -am (.ci/run does this when PostgreSQL is installed)";

    private static final AtomicBoolean SKIP_REPORTED = new AtomicBoolean();

    /** The PostgreSQL URL from the environment, or null when no server was provided. */
    public static String postgresUrl() {
        String url = System.getenv(POSTGRES_URL_ENV);
        return url == null || url.isBlank() ? null : url;
    }

    /** {@link #postgresUrl()}, or skips the calling test, saying why on stdout the first time. */
    public static String postgresUrlOrSkip() {
        String url = postgresUrl();
        if (url == null && SKIP_REPORTED.compareAndSet(false, true)) {
            System.out.println(SKIPPED);
        }
        Assumptions.assumeTrue(url != null, SKIPPED);
        return url;
    }

    /** A schema of its own in a shared PostgreSQL database; closing drops it with everything in it. */
    public record PostgresSchema(String baseUrl, String name, String url) implements AutoCloseable {

        /** Creates a fresh schema so runs never see each other's rows. */
        public static PostgresSchema create(String baseUrl) throws SQLException {
            String name =
                    "pega_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
            execute(baseUrl, "CREATE SCHEMA " + name);
            return new PostgresSchema(
                    baseUrl, name, baseUrl + (baseUrl.contains("?") ? "&" : "?") + "currentSchema=" + name);
        }

        @Override
        public void close() throws SQLException {
            execute(baseUrl, "DROP SCHEMA IF EXISTS " + name + " CASCADE");
        }

        private static void execute(String url, String sql) throws SQLException {
            try (Connection connection = DriverManager.getConnection(url);
                    Statement statement = connection.createStatement()) {
                statement.execute(sql);
            }
        }
    }

    public static DataSource postgres(String url) {
        return migrate(new DriverManagerDataSource(url));
    }

    private static DataSource migrate(DataSource dataSource) {
        Flyway.configure()
                .dataSource(dataSource)
                .locations("classpath:db/migration")
                .load()
                .migrate();
        return dataSource;
    }
}
