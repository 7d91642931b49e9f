package aeron.spark;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** The `aeron` table: batch reads of any recording, micro-batch reads of any (of the archive's files
 *  with archiveDir, else over a remote archive's control protocol); batch and streaming writes to a
 *  channel and stream (AeronWrite: any DataFrame with `data` and an optional `reserved_value`, so the
 *  table accepts any schema and the write checks it). A write with an archive control option is the
 *  Python sink's (PythonDelegate): its write is that of Spark's table of `aeron_python`. */
final class AeronTable implements SupportsRead, SupportsWrite {
    private final StructType schema;
    private final Options.OptionException readError;   // a schema no read can have (AeronProvider.checkSchema)
    private final StructType given;                     // the schema Spark gave (the Python source checks its own)
    private final Transform[] partitioning;
    private final Map<String, String> properties;
    private Table python;

    AeronTable(StructType schema, Options.OptionException readError, StructType given, Transform[] partitioning,
               Map<String, String> properties) {
        this.schema = schema;
        this.readError = readError;
        this.given = given;
        this.partitioning = partitioning;
        this.properties = properties;
    }

    @Override
    public String name() {
        return "aeron";
    }

    @Override
    public StructType schema() {
        return schema;
    }

    @Override
    public Set<TableCapability> capabilities() {
        Set<TableCapability> capabilities = EnumSet.of(TableCapability.BATCH_READ, TableCapability.MICRO_BATCH_READ,
            TableCapability.BATCH_WRITE, TableCapability.STREAMING_WRITE, TableCapability.ACCEPT_ANY_SCHEMA);
        if (PythonDelegate.writes(properties)) {
            capabilities.add(TableCapability.TRUNCATE);   // the Python sink's own answer to mode("overwrite")
        }
        return capabilities;
    }

    private Table python(String why) {
        if (python == null) {
            python = PythonDelegate.table(why, given, partitioning, properties);
        }
        return python;
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
        if (readError != null) {
            throw readError;
        }
        return new AeronScanBuilder(schema, new java.util.HashMap<>(options.asCaseSensitiveMap()),
            options.get("archiveDir") == null);
    }

    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
        if (PythonDelegate.writes(info.options())) {
            return ((SupportsWrite) python("a write with " + String.join(", ", PythonDelegate.writeOptions(
                info.options())) + " (the archive's control session)")).newWriteBuilder(info);
        }
        return new AeronWrite(info);
    }
}
