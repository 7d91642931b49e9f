package aeron.spark;

import java.util.EnumSet;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** The `aeron` table: batch reads of any recording, micro-batch reads of any (of the archive's files
 *  with archiveDir, else over a remote archive's control protocol); batch and streaming writes to a
 *  channel and stream (AeronWrite: any DataFrame with `data` and an optional `reserved_value`, so the
 *  table accepts any schema and the write checks it). Everything is served here: nothing is handed to
 *  the Python source. */
final class AeronTable implements SupportsRead, SupportsWrite {
    private final StructType schema;
    private final Options.OptionException readError;   // a schema no read can have (AeronProvider.checkSchema)

    AeronTable(StructType schema, Options.OptionException readError) {
        this.schema = schema;
        this.readError = readError;
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
        return new AeronWrite(info);
    }
}
