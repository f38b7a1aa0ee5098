package io.pegaflow.metaserver.node;

import io.pegaflow.metaserver.support.Databases;
import io.pegaflow.metaserver.support.Databases.PostgresSchema;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;

/**
 * The node lifecycle contract on PostgreSQL, each test in a schema of its own. Runs when {@code
 * PEGA_TEST_POSTGRES_URL} names a server ({@code .ci/postgres.sh} prints one) and is skipped otherwise.
 */
@Tag("integration")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PostgresNodeLifecycleTest extends NodeLifecycleContract {

    private PostgresSchema schema;

    @Override
    DataSource newDatabase() throws Exception {
        String url = Databases.postgresUrlOrSkip();
        schema = PostgresSchema.create(url);
        return Databases.postgres(schema.url());
    }

    @AfterEach
    void dropSchema() throws Exception {
        if (schema != null) {
            schema.close();
        }
    }
}
