package aeron.spark;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.aggregate.AggregateFunc;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.expressions.aggregate.Count;
import org.apache.spark.sql.connector.expressions.aggregate.CountStar;
import org.apache.spark.sql.connector.expressions.aggregate.Max;
import org.apache.spark.sql.connector.expressions.aggregate.Min;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.SupportsPushDownAggregates;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.types.StructType;

/**
 * Pushdown (docs/spark.md, "The JVM connector"): the columns a query uses; filters on recording_id,
 * session_id and stream_id (recordings left out) and on position (ranges narrowed, and the end
 * positions bounded inside the walk), each applied exactly, so none is evaluated again; count(*),
 * count(column), min(position) and max(position) with no grouping, answered by a walk over the
 * frame headers, with no payload copied.
 */
final class AeronScanBuilder implements SupportsPushDownRequiredColumns, SupportsPushDownFilters,
    SupportsPushDownAggregates {
    static final List<String> RECORDING_COLUMNS = List.of("recording_id", "session_id", "stream_id");

    private final java.util.Map<String, String> options;
    private StructType schema;
    private final List<Filter> pushed = new ArrayList<>();
    private Aggregation aggregation;
    /** a read without archiveDir (a remote archive): filters narrow what is replayed and Spark applies
     *  them again; no aggregate is answered from the catalog */
    private final boolean remote;

    AeronScanBuilder(StructType schema, java.util.Map<String, String> options, boolean remote) {
        this.schema = schema;
        this.options = options;
        this.remote = remote;
    }

    @Override
    public void pruneColumns(StructType required) {
        schema = required;
    }

    static String attribute(Filter filter) {
        if (filter instanceof EqualTo f) {
            return f.attribute();
        } else if (filter instanceof GreaterThan f) {
            return f.attribute();
        } else if (filter instanceof GreaterThanOrEqual f) {
            return f.attribute();
        } else if (filter instanceof LessThan f) {
            return f.attribute();
        } else if (filter instanceof LessThanOrEqual f) {
            return f.attribute();
        } else if (filter instanceof In f) {
            return f.attribute();
        }
        return null;
    }

    static boolean integral(Object value) {
        return value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte;
    }

    static boolean handled(Filter filter) {
        String name = attribute(filter);
        if (name == null) {
            return false;
        }
        if (filter instanceof In in) {
            return RECORDING_COLUMNS.contains(name) && java.util.Arrays.stream(in.values()).allMatch(
                AeronScanBuilder::integral);
        }
        Object value = Filters.value(filter);
        return integral(value) && (RECORDING_COLUMNS.contains(name) || name.equals("position"));
    }

    @Override
    public Filter[] pushFilters(Filter[] filters) {
        List<Filter> rest = new ArrayList<>();
        for (Filter filter : filters) {
            if (handled(filter)) {
                pushed.add(filter);
                if (remote) {
                    rest.add(filter);
                }
            } else {
                rest.add(filter);
            }
        }
        return rest.toArray(new Filter[0]);
    }

    @Override
    public Filter[] pushedFilters() {
        return pushed.toArray(new Filter[0]);
    }

    static boolean isPosition(org.apache.spark.sql.connector.expressions.Expression e) {
        return e instanceof NamedReference ref && ref.fieldNames().length == 1
            && ref.fieldNames()[0].equals("position");
    }

    static boolean supported(Aggregation aggregation) {
        if (aggregation.groupByExpressions().length != 0) {
            return false;
        }
        for (AggregateFunc f : aggregation.aggregateExpressions()) {
            boolean ok = f instanceof CountStar
                || (f instanceof Count c && !c.isDistinct() && c.column() instanceof NamedReference)
                || (f instanceof Min m && isPosition(m.column()))
                || (f instanceof Max m && isPosition(m.column()));
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean supportCompletePushDown(Aggregation aggregation) {
        return !remote && supported(aggregation);
    }

    @Override
    public boolean pushAggregation(Aggregation aggregation) {
        if (remote || !supported(aggregation)) {
            return false;
        }
        this.aggregation = aggregation;
        return true;
    }

    @Override
    public Scan build() {
        return new AeronScan(options, schema, pushed.toArray(new Filter[0]), aggregation);
    }
}
