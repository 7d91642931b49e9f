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
 * <li>a durable=true write with any of the archive control options (controlChannel,
 *     controlStreamId, responseChannel, responseStreamId, timeout): the Python sink's wait through the
 *     archive's control session (the JVM sink waits on the rec-pos counter in the local driver's CnC
 *     file instead).</li>
 * </ul>
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

    /** How the Python sink reaches the archive for durable=true (archiveDir, which neither sink uses, is
     *  not among them). */
    static final List<String> WRITE_CONTROL = List.of(
        "controlChannel", "controlStreamId", "responseChannel", "responseStreamId", "timeout");

    /** A write the Python sink serves: durable=true with an archive control option, which only its wait
     *  through the archive's control session uses (without durable=true neither sink reaches the
     *  archive, and the JVM sink serves the write; a malformed durable is the JVM sink's to refuse, with
     *  the Python sink's words). */
    static boolean writes(Map<String, String> options) {
        String durable = get(options, "durable");
        if (durable == null || !List.of("true", "1", "yes").contains(durable.strip().toLowerCase(Locale.ROOT))) {
            return false;
        }
        return !writeOptions(options).isEmpty();
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
                + ", or leave out " + String.join(", ", WRITE_CONTROL) + " to write natively");
        }
        PythonDataSourceV2 provider = new PythonDataSourceV2();
        provider.setShortName(NAME);
        return provider.getTable(schema, partitioning, properties);
    }

    /** The archive control options in `options`, as given. */
    static List<String> writeOptions(Map<String, String> options) {
        return options.keySet().stream().filter(key -> WRITE_CONTROL.stream().anyMatch(
            name -> name.toLowerCase(Locale.ROOT).equals(key.toLowerCase(Locale.ROOT)))).toList();
    }
}
