package aeron.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.spark.sql.connector.expressions.aggregate.AggregateFunc;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.expressions.aggregate.Count;
import org.apache.spark.sql.connector.expressions.aggregate.CountStar;
import org.apache.spark.sql.connector.expressions.aggregate.Min;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A batch read planned on the driver (aeron_async/spark/reader.py's plan, from the catalog file):
 * the selected recordings (with dropRepeats, those Repeats keeps), an active one up to the position
 * it has recorded, each position range cut into partitions of about maxBytesPerPartition (whole
 * terms; without it, the read split evenly over Spark's default parallelism: cut), narrowed by the
 * pushed filters. Everything wrong with the options or the archive
 * is found here, at query start.
 */
final class AeronScan implements Scan, Batch {
    static final int COUNT = 0, MIN = 1, MAX = 2;

    private final java.util.Map<String, String> given;
    private Options options;
    private final StructType schema;
    private final Filter[] filters;
    private final int[] aggregates;   // null: a read of rows

    AeronScan(java.util.Map<String, String> given, StructType schema, Filter[] filters, Aggregation aggregation) {
        this.given = given;
        this.schema = schema;
        this.filters = filters;
        if (aggregation == null) {
            aggregates = null;
        } else {
            AggregateFunc[] functions = aggregation.aggregateExpressions();
            aggregates = new int[functions.length];
            for (int i = 0; i < functions.length; i++) {
                AggregateFunc f = functions[i];
                aggregates[i] = f instanceof CountStar || f instanceof Count ? COUNT : f instanceof Min ? MIN : MAX;
            }
        }
    }

    @Override
    public StructType readSchema() {
        if (aggregates == null) {
            return schema;
        }
        StructField[] fields = new StructField[aggregates.length];
        for (int i = 0; i < aggregates.length; i++) {
            fields[i] = new StructField("agg_" + i, DataTypes.LongType, aggregates[i] != COUNT, Metadata.empty());
        }
        return new StructType(fields);
    }

    @Override
    public String description() {
        String where = remote() ? "remote archive on " + option("controlChannel", "aeron:ipc?term-length=64k")
            + " stream " + option("controlStreamId", "10") : given.get("archiveDir");
        return "aeron " + where + " filters " + Arrays.toString(filters)
            + (aggregates == null ? "" : " aggregates " + Arrays.toString(aggregates));
    }

    private String option(String name, String fallback) {
        for (java.util.Map.Entry<String, String> option : given.entrySet()) {
            if (option.getKey().equalsIgnoreCase(name)) {
                return option.getValue();
            }
        }
        return fallback;
    }

    /** A read without archiveDir: a remote archive, over its control protocol (Remote). */
    boolean remote() {
        return option("archiveDir", null) == null;
    }

    @Override
    public Batch toBatch() {
        options = Options.parse(given, false);
        return this;
    }

    @Override
    public org.apache.spark.sql.connector.read.streaming.MicroBatchStream toMicroBatchStream(String checkpoint) {
        return new AeronMicroBatchStream(Options.parse(given, true), schema, filters);
    }

    static List<Recording> catalog(String archiveDir) {
        return catalog(archiveDir, java.util.Map.of());
    }

    /** The catalog's recordings; a recording in `known` (same id and start) keeps its channels, read
     *  again only for the others (a stream's latestOffset lists the catalog at every trigger). */
    static List<Recording> catalog(String archiveDir, java.util.Map<Long, Recording> known) {
        Native.load();
        try {
            long[] fields = Native.recordings(archiveDir);
            List<Recording> found = new ArrayList<>();
            for (int row = 0; row < fields.length / Native.RECORDING_FIELDS; row++) {
                long id = fields[row * Native.RECORDING_FIELDS];
                Recording seen = known.get(id);
                String[] channels = seen != null && seen.start == fields[row * Native.RECORDING_FIELDS + 1]
                    ? new String[] {seen.channel, seen.strippedChannel} : Native.channels(archiveDir, id);
                found.add(new Recording(fields, row, channels[0], channels[1]));
            }
            return found;
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
    }

    List<Recording> select() {
        return select(options, true);
    }

    /** The recordings the options choose, by id; `required`: a channel + stream with none is an error. */
    static List<Recording> select(Options options, boolean required) {
        return select(options, required, java.util.Map.of());
    }

    /** select(options, required), reusing the channels of `known` recordings (catalog(dir, known)). */
    static List<Recording> select(Options options, boolean required, java.util.Map<Long, Recording> known) {
        List<Recording> all = catalog(options.archiveDir, known);
        List<Recording> found = new ArrayList<>();
        if (options.recordingIds != null) {
            for (long id : options.recordingIds) {
                Recording r = all.stream().filter(x -> x.id == id).findFirst().orElse(null);
                if (r == null && required) {
                    throw new Options.OptionException("recording " + id + " (recordingIds) is not in the archive: "
                        + "list the recordings with `aeron-async recordings list`");
                }
                if (r != null) {
                    found.add(r);
                }
            }
        } else {
            for (Recording r : all) {
                if (r.streamId == options.streamId && r.channel.contains(options.channel)) { // as the archive matches: original channel
                    found.add(r);
                }
            }
            if (required && found.isEmpty()) {
                throw new Options.OptionException("no recording of stream " + options.streamId
                    + " on a channel containing " + Options.repr(options.channel) + " in the archive");
            }
        }
        found.sort((a, b) -> Long.compare(a.id, b.id));
        return found;
    }

    static long floorTerm(long position, int termLength) {
        return position - Math.floorMod(position, (long) termLength);
    }

    /** Where a recording ends now: its stop position, or the position an active one has recorded (its
     *  rec-pos counter in the CnC file of the driver in aeronDir; the catalog's stop position when it
     *  stopped since it was listed). */
    static long recordedEnd(Options options, Recording r) {
        if (r.stopped()) {
            return r.stop;
        }
        try {
            long position = Native.recordedPosition(options.aeronDir, r.id);
            if (position >= 0) {
                return position;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
        for (Recording again : catalog(options.archiveDir)) {
            if (again.id == r.id && again.stopped()) {
                return again.stop;
            }
        }
        return r.start;
    }

    /** The recordings the options choose, from a remote archive (reader.py's select_recordings). */
    static List<Recording> selectRemote(Remote archive, Options options) throws IOException {
        return selectRemote(archive, options, true);
    }

    /** ... `required`: a chosen id the archive does not know, or a channel + stream with none, is an
     *  error (else left out: a stream's recordings, stream_reader.py's _recordings). */
    static List<Recording> selectRemote(Remote archive, Options options, boolean required) throws IOException {
        List<Recording> found = new ArrayList<>();
        if (options.recordingIds != null) {
            for (long id : options.recordingIds) {
                Recording r = archive.recording(id);
                if (r == null && !required) {
                    continue;
                }
                if (r == null) {
                    throw new Options.OptionException("recording " + id + " (recordingIds) is not in the archive: "
                        + "list the recordings with `aeron-async recordings list`");
                }
                found.add(r);
            }
        } else {
            found.addAll(archive.recordings(options.channel, options.streamId));
            if (required && found.isEmpty()) {
                throw new Options.OptionException("no recording of stream " + options.streamId
                    + " on a channel containing " + Options.repr(options.channel) + " in the archive");
            }
        }
        found.sort((a, b) -> Long.compare(a.id, b.id));
        return found;
    }

    /** What a batch read plans of one recording: [start, end), and how a range of it is read. */
    private record Span(Recording r, long start, long end, java.util.function.BiFunction<Long, Long, RangePartition> range) {
    }

    /** A batch read without maxBytesPerPartition: ranges of at most this many bytes (a retried task's
     *  work bounded). */
    static final long AUTO_MAX_BYTES_PER_PARTITION = 1L << 30;

    /** reader.py's plan of one recording: [start, end) from the options (checked against what it has
     *  recorded), left out by the pushed filters on its constant columns (null), narrowed to the terms
     *  that can hold a message ending in the pushed position bounds (a message ending in [low, high]
     *  starts in the term of its last byte, before high). */
    private Span span(Recording r, long recorded, long[] bounds,
                      java.util.function.BiFunction<Long, Long, RangePartition> range) {
        long start = Options.resolve("startingPositions", options.starting, options.startingMap,
            Options.EARLIEST, r, recorded);
        long end = Options.resolve("endingPositions", options.ending, options.endingMap, Options.LATEST, r,
            recorded);
        if (end < start) {
            throw new Options.OptionException("recording " + r.id + ": endingPositions " + end
                + " is before startingPositions " + start);
        }
        if (!Filters.keeps(filters, r)) {
            return null;
        }
        if (bounds[0] > Long.MIN_VALUE) {
            start = Math.max(start, floorTerm(bounds[0] - 1, r.termLength));
        }
        return new Span(r, start, Math.min(end, bounds[1]), range);
    }

    /** Spark's default parallelism (1 without an active session). */
    private static int parallelism() {
        try {
            return Math.max(1, org.apache.spark.sql.SparkSession.active().sparkContext().defaultParallelism());
        } catch (IllegalStateException e) {
            return 1;
        }
    }

    /** The spans cut at whole terms into ranges: of about maxBytesPerPartition where given (reader.py's
     *  split_range), else the read's bytes split evenly over Spark's default parallelism (whole terms, at
     *  most AUTO_MAX_BYTES_PER_PARTITION), as Spark sizes its file splits: a task's fixed cost (its
     *  partial aggregation and shuffle files) is paid once a core, not once every 64 MiB. */
    private List<RangePartition> cut(List<Span> spans) {
        long size = options.maxBytesPerPartition;
        if (!options.maxBytesPerPartitionGiven) {
            long total = 0;
            for (Span s : spans) {
                total += Math.max(0, s.end() - s.start());
            }
            size = Math.min(AUTO_MAX_BYTES_PER_PARTITION, Math.max(1, -Math.floorDiv(-total, (long) parallelism())));
        }
        List<RangePartition> ranges = new ArrayList<>();
        for (Span s : spans) {
            long term = s.r().termLength;
            long chunk = options.maxBytesPerPartitionGiven ? Math.max(term, size - size % term)
                : Math.max(term, -Math.floorDiv(-size, term) * term);
            for (long low = s.start(); low < s.end(); ) {
                long high = Math.min(s.end(), (Math.floorDiv(low, chunk) + 1) * chunk);
                ranges.add(s.range().apply(low, high));
                low = high;
            }
        }
        return ranges;
    }

    /** reader.py's plan over a control session with the remote archive: the same recordings, ends and
     *  ranges, each range read by a task over its own session (Readers.RemoteRangeReader). */
    private InputPartition[] planRemote(long[] bounds) {
        List<Span> spans = new ArrayList<>();
        try (Remote archive = new Remote(options)) {
            List<Recording> chosen = selectRemote(archive, options);
            if (options.dropRepeats) {
                chosen = Repeats.kept(chosen, r -> Repeats.classify(archive, options, r));
            }
            for (Recording r : chosen) {
                long recorded = r.stopped() ? r.stop : archive.maxRecordedPosition(r.id);
                // Spark applies the pushed filters again (AeronScanBuilder): the bounds only read less
                Span s = span(r, recorded, bounds, (low, high) -> new RangePartition(options, r, low, high,
                    options.dropRepeats));
                if (s != null) {
                    spans.add(s);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("aeron data source: " + e.getMessage(), e);
        }
        return cut(spans).toArray(new InputPartition[0]);
    }

    @Override
    public InputPartition[] planInputPartitions() {
        long[] bounds = Filters.endBounds(filters);
        if (options.remote) {
            return planRemote(bounds);
        }
        List<Span> spans = new ArrayList<>();
        List<Recording> chosen = select();
        if (options.dropRepeats) {
            chosen = Repeats.kept(options, chosen);
        }
        for (Recording r : chosen) {
            // an active recording is read up to where it stands now (reader.py's recorded_end)
            long recorded = recordedEnd(options, r);
            Span s = span(r, recorded, bounds, (low, high) -> new RangePartition(options.archiveDir, r, low, high,
                bounds[0], bounds[1], options.failOnDataLoss, recorded, !r.stopped(), options.dropRepeats));
            if (s != null) {
                spans.add(s);
            }
        }
        List<RangePartition> ranges = cut(spans);
        if (aggregates != null) {
            return new InputPartition[] {new AggregatePartition(ranges.toArray(new RangePartition[0]))};
        }
        return ranges.toArray(new InputPartition[0]);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        return new Readers(schema, aggregates);
    }
}
