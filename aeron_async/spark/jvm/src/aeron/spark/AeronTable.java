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

/** The `aeron` table: batch reads of any recording, micro-batch reads of any; batch and streaming
 *  writes to a channel and stream (AeronWrite: any DataFrame with `data` and an optional
 *  `reserved_value`, so the table accepts any schema and the write checks it). A read without
 *  archiveDir is the Python source's (PythonDelegate): its scan is that of Spark's table of
 *  `aeron_python`. */
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
        // TRUNCATE as the Python source's table has it: mode("overwrite") then reaches AeronWrite.truncate,
        // which refuses it in the Python sink's words (Spark's own refusal names no fix)
        return EnumSet.of(TableCapability.BATCH_READ, TableCapability.MICRO_BATCH_READ,
            TableCapability.BATCH_WRITE, TableCapability.STREAMING_WRITE, TableCapability.ACCEPT_ANY_SCHEMA,
            TableCapability.TRUNCATE);
    }

    private Table python(String why) {
        if (python == null) {
            python = PythonDelegate.table(why, given, partitioning, properties);
        }
        return python;
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
        if (PythonDelegate.reads(options)) {
            return ((SupportsRead) python("a read with dropRepeats without archiveDir (through the archive's control "
                + "channel)"))
                .newScanBuilder(options);
        }
        if (readError != null) {
            throw readError;
        }
        boolean remote = PythonDelegate.remote(options);
        return new AeronScanBuilder(schema, new java.util.HashMap<>(options.asCaseSensitiveMap()), remote,
            remote ? () -> ((SupportsRead) python("a streaming read without archiveDir (through the archive's "
                + "control channel)")).newScanBuilder(options) : null);
    }

    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
        return new AeronWrite(info);
    }
}
