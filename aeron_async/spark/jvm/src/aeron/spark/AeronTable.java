package aeron.spark;

import java.util.EnumSet;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** The `aeron` table: batch reads of stopped recordings, micro-batch reads of any. */
final class AeronTable implements SupportsRead {
    private final StructType schema;

    AeronTable(StructType schema) {
        this.schema = schema;
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
        return EnumSet.of(TableCapability.BATCH_READ, TableCapability.MICRO_BATCH_READ);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
        return new AeronScanBuilder(schema, new java.util.HashMap<>(options.asCaseSensitiveMap()));
    }
}
