package aeron.spark;

import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;

/** The pushed filters applied: to a recording's constant columns, and as bounds on end positions. */
final class Filters {
    private Filters() {
    }

    static Object value(Filter filter) {
        if (filter instanceof EqualTo f) {
            return f.value();
        } else if (filter instanceof GreaterThan f) {
            return f.value();
        } else if (filter instanceof GreaterThanOrEqual f) {
            return f.value();
        } else if (filter instanceof LessThan f) {
            return f.value();
        } else if (filter instanceof LessThanOrEqual f) {
            return f.value();
        }
        return null;
    }

    static boolean test(Filter filter, long actual) {
        if (filter instanceof In in) {
            for (Object v : in.values()) {
                if (((Number) v).longValue() == actual) {
                    return true;
                }
            }
            return false;
        }
        long v = ((Number) value(filter)).longValue();
        if (filter instanceof EqualTo) {
            return actual == v;
        } else if (filter instanceof GreaterThan) {
            return actual > v;
        } else if (filter instanceof GreaterThanOrEqual) {
            return actual >= v;
        } else if (filter instanceof LessThan) {
            return actual < v;
        }
        return actual <= v;
    }

    /** Whether the recording-level filters keep recording r. */
    static boolean keeps(Filter[] filters, Recording r) {
        for (Filter filter : filters) {
            String name = AeronScanBuilder.attribute(filter);
            long actual;
            switch (name) {
                case "recording_id" -> actual = r.id;
                case "session_id" -> actual = r.sessionId;
                case "stream_id" -> actual = r.streamId;
                default -> {
                    continue;
                }
            }
            if (!test(filter, actual)) {
                return false;
            }
        }
        return true;
    }

    /** {low, high}: the end positions the position filters allow, inclusive. */
    static long[] endBounds(Filter[] filters) {
        long low = Long.MIN_VALUE, high = Long.MAX_VALUE;
        for (Filter filter : filters) {
            if (!"position".equals(AeronScanBuilder.attribute(filter))) {
                continue;
            }
            long v = ((Number) value(filter)).longValue();
            if (filter instanceof EqualTo) {
                low = Math.max(low, v);
                high = Math.min(high, v);
            } else if (filter instanceof GreaterThan) {
                low = Math.max(low, v == Long.MAX_VALUE ? v : v + 1);
                if (v == Long.MAX_VALUE) {
                    high = Long.MIN_VALUE;
                }
            } else if (filter instanceof GreaterThanOrEqual) {
                low = Math.max(low, v);
            } else if (filter instanceof LessThan) {
                high = Math.min(high, v == Long.MIN_VALUE ? v : v - 1);
                if (v == Long.MIN_VALUE) {
                    low = Long.MAX_VALUE;
                }
            } else if (filter instanceof LessThanOrEqual) {
                high = Math.min(high, v);
            }
        }
        return new long[] {low, high};
    }
}
