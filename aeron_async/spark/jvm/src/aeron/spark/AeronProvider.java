package aeron.spark;

import java.util.Map;

import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** The JVM connector's provider (aeron.DefaultSource is the name Spark finds it by). */
public class AeronProvider implements TableProvider {
    /** The source's columns: aeron_async/spark/datasource.py's SCHEMA, in its order. */
    public static final StructType SCHEMA = new StructType(new StructField[] {
        field("data", DataTypes.BinaryType), field("recording_id", DataTypes.LongType),
        field("session_id", DataTypes.IntegerType), field("stream_id", DataTypes.IntegerType),
        field("position", DataTypes.LongType), field("reserved_value", DataTypes.LongType),
        field("channel", DataTypes.StringType),
    });

    private static StructField field(String name, DataType type) {
        return new StructField(name, type, false, Metadata.empty());
    }

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        return SCHEMA;
    }

    @Override
    public boolean supportsExternalMetadata() {
        return true;
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        // a write hands over the DataFrame's schema: checked by the write (AeronWrite); a read's
        // .schema(...) is checked here, its error raised when the table is read
        StructType given = schema == null ? SCHEMA : schema;
        try {
            return new AeronTable(checkSchema(given), null);
        } catch (Options.OptionException e) {
            return new AeronTable(given, e);
        }
    }

    /** A `.schema(...)` may choose some of the columns, with their types (datasource.py's check_read_schema). */
    static StructType checkSchema(StructType schema) {
        if (schema.equals(SCHEMA)) {
            return schema;
        }
        java.util.List<String> wrong = new java.util.ArrayList<>();
        java.util.Set<String> names = new java.util.HashSet<>();
        boolean twice = false;
        for (StructField f : schema.fields()) {
            twice |= !names.add(f.name());
            boolean known = java.util.Arrays.asList(SCHEMA.fieldNames()).contains(f.name());
            if (!known || !SCHEMA.apply(f.name()).dataType().equals(f.dataType())) {
                wrong.add(f.name() + " " + f.dataType().simpleString());
            }
        }
        if (schema.fields().length == 0 || !wrong.isEmpty() || twice) {
            String problem = !wrong.isEmpty()
                ? String.join(", ", wrong) + (wrong.size() == 1 ? " is" : " are") + " not among them"
                : schema.fields().length == 0 ? "it names no column" : "it names a column twice";
            throw new Options.OptionException("the aeron source's columns are " + SCHEMA.simpleString()
                + "; a .schema(...) may choose some of them, with those types, but " + problem + " (gave "
                + schema.simpleString() + ")");
        }
        return schema;
    }
}
