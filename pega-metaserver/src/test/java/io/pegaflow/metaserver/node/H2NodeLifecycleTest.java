package io.pegaflow.metaserver.node;

import io.pegaflow.metaserver.support.Databases;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The node lifecycle contract on the default database: embedded H2 in file mode. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class H2NodeLifecycleTest extends NodeLifecycleContract {

    @TempDir
    Path dir;

    @Override
    DataSource newDatabase() {
        return Databases.h2File(dir);
    }
}
