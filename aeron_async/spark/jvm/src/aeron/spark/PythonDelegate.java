package aeron.spark;

import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2;
import org.apache.spark.sql.types.StructType;

/**
 * What the JVM connector cannot apply natively goes to the Python source (docs/spark.md, "The JVM
 * connector"), decided per table from its options (names case-insensitive):
 * <ul>
 * <li>a read without archiveDir (a remote archive, reached over its control protocol) with
 *     dropRepeats=true, and every streaming read without archiveDir (AeronScan.toMicroBatchStream):
 *     a batch read without archiveDir is the JVM connector's own (Remote, aa_spark_jni_remote.c).</li>
 * </ul>
 * Every write is the JVM sink's (AeronWrite), a durable=true one with the archive control options
 * too (SinkWriter waits through the archive's control session, Remote).
 * Such a table is Spark's own table of the Python data source registered as `aeron_python`
 * (aeron_async.spark.register(spark) registers it), reached through Spark's provider for Python
 * data sources: the Python source's planning, tasks and results, the same as
 * format("aeron_python").
 */
final class PythonDelegate {
    static final String NAME = "aeron_python";

    private PythonDelegate() {
    }

    private static String get(Map<String, String> options, String name) {
        for (Map.Entry<String, String> option : options.entrySet()) {
            if (option.getKey().equalsIgnoreCase(name)) {
                return option.getValue();
            }
        }
        return null;
    }

    /** A read the Python source serves: an empty archiveDir (the Python source says so), or none with
     *  dropRepeats=true (its look at the recordings' last messages reads the segment files); a
     *  streaming read without archiveDir goes to it from AeronScan.toMicroBatchStream. */
    static boolean reads(Map<String, String> options) {
        String dir = get(options, "archiveDir");
        if (dir != null) {
            return dir.strip().isEmpty();
        }
        String drop = get(options, "dropRepeats");
        return drop != null && List.of("true", "1", "yes").contains(drop.strip().toLowerCase(Locale.ROOT));
    }

    /** A read without archiveDir that the JVM connector serves itself: a batch read over the remote
     *  archive's control protocol (Remote). */
    static boolean remote(Map<String, String> options) {
        return get(options, "archiveDir") == null && !reads(options);
    }

    /** The Python source's table for these options and schema; refused in one line where the session
     *  has no `aeron_python`. */
    static Table table(String why, StructType schema, Transform[] partitioning, Map<String, String> properties) {
        boolean registered;
        try {
            registered = SparkSession.active().sessionState().dataSourceManager().dataSourceExists(NAME);
        } catch (IllegalStateException e) {   // no active session
            registered = false;
        }
        if (!registered) {
            throw new Options.OptionException(why + " is served by the Python source, which this session has not "
                + "registered: call aeron_async.spark.register(spark) first (it registers " + NAME + ")"
                + ", or give option archiveDir (the archive's directory on each host) to read natively");
        }
        PythonDataSourceV2 provider = new PythonDataSourceV2();
        provider.setShortName(NAME);
        return provider.getTable(schema, partitioning, properties);
    }
}
