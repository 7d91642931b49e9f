package aeron.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.ReadAllAvailable;
import org.apache.spark.sql.connector.read.streaming.ReadLimit;
import org.apache.spark.sql.connector.read.streaming.ReadMaxBytes;
import org.apache.spark.sql.connector.read.streaming.ReadMaxRows;
import org.apache.spark.sql.connector.read.streaming.SupportsTriggerAvailableNow;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;

/**
 * Structured Streaming reads (aeron_async/spark/stream_reader.py's offsets and limits, from the
 * catalog file and the recordings' rec-pos counters with archiveDir, else over a control session
 * with the remote archive): an offset is a JSON object of recording id to position, ids ascending,
 * written as the Python source writes it, so a micro-batch re-run from the checkpoint's offset log
 * reads exactly the same messages. With archiveDir each micro-batch ends every recording at a
 * message boundary it has recorded whole; a remote archive's ranges are replayed, which waits for a
 * message recorded in part (the Python source's ends, the same offsets). Recordings that match
 * channel + streamId and appear while the query runs are read from their start.
 */
final class AeronMicroBatchStream implements MicroBatchStream, SupportsTriggerAvailableNow,
    org.apache.spark.sql.connector.read.streaming.SupportsRealTimeMode {
    private final Options options;
    private final StructType schema;
    private final Filter[] filters;
    private Map<Long, Long> target;  // AvailableNow: where each recording stood when the query started
    private final Map<Long, Recording> known = new HashMap<>();
    /** active recordings' rec-pos counters (Native.counterOpen handles), closed by stop() */
    private final Map<Long, Long> counters = new HashMap<>();
    /** without archiveDir: the driver's control session with the archive (archive()), closed by stop() */
    private Remote archive;
    private long archiveUsed;
    /** a control session unused for longer is opened again: an archive may have ended it meanwhile */
    private static final long IDLE_NS = 2_000_000_000L;

    AeronMicroBatchStream(Options options, StructType schema, Filter[] filters) {
        this.options = options;
        this.schema = schema;
        this.filters = filters;
    }

    /** An offset: recording id to position, ascending. */
    static final class Positions extends Offset {
        final TreeMap<Long, Long> positions;

        Positions(Map<Long, Long> positions) {
            this.positions = new TreeMap<>(positions);
        }

        @Override
        public String json() {
            StringBuilder out = new StringBuilder("{");
            for (Map.Entry<Long, Long> e : positions.entrySet()) {
                out.append(out.length() > 1 ? ", " : "").append('"').append(e.getKey()).append("\": ").append(e.getValue());
            }
            return out.append('}').toString();
        }
    }

    private static final Pattern ENTRY = Pattern.compile("\"(\\d+)\"\\s*:\\s*(-?\\d+)");

    /** What Spark's progress reports call the source. */
    @Override
    public String toString() {
        return "aeron " + (options.remote ? "remote archive on " + options.controlChannel + " stream "
            + options.controlStreamId : options.archiveDir);
    }

    @Override
    public Offset deserializeOffset(String json) {
        Map<Long, Long> positions = new TreeMap<>();
        Matcher match = ENTRY.matcher(json);
        while (match.find()) {
            positions.put(Long.parseLong(match.group(1)), Long.parseLong(match.group(2)));
        }
        if (positions.isEmpty() && !json.strip().equals("{}")) {
            throw new Options.OptionException("the offset " + json + " is not a map of recording id to position: was "
                + "the checkpoint written by another source?");
        }
        return new Positions(positions);
    }

    /** The remote archive's control session: opened on first use, and again after IDLE_NS unused. */
    private synchronized Remote archive() {
        long now = System.nanoTime();
        if (archive != null && now - archiveUsed > IDLE_NS) {
            archive.close();
            archive = null;
        }
        if (archive == null) {
            archive = new Remote(options);
        }
        archiveUsed = now;
        return archive;
    }

    private static UncheckedIOException failed(IOException e) {
        return new UncheckedIOException("aeron data source: " + e.getMessage(), e);
    }

    private Map<Long, Recording> recordings() {
        Map<Long, Recording> found = new TreeMap<>();
        try {
            for (Recording r : options.remote ? AeronScan.selectRemote(archive(), options, false)
                : AeronScan.select(options, false, known)) {
                found.put(r.id, r);
            }
        } catch (IOException e) {
            throw failed(e);
        }
        known.putAll(found);
        return found;
    }

    /** Where a recording ends now: its stop position, or what an active one has recorded (its rec-pos
     *  counter, kept open from call to call: latestOffset runs for every trigger, every few ms when idle). */
    private synchronized long recordedEnd(Recording r) {
        if (r.stopped()) {
            Long counter = counters.remove(r.id);
            if (counter != null) {
                Native.counterClose(counter);
            }
            return r.stop;
        }
        if (options.remote) {
            try {
                return archive().maxRecordedPosition(r.id);
            } catch (IOException e) {
                throw failed(e);
            }
        }
        try {
            Long counter = counters.get(r.id);
            if (counter == null) {
                counter = Native.counterOpen(options.aeronDir, r.id);
                if (counter != 0) {
                    counters.put(r.id, counter);
                }
            }
            long position = counter == 0 ? -1 : Native.counterValue(counter, r.id);
            if (position >= 0) {
                return position;
            }
            if (counter != 0) {  // no longer the recording's: it stopped
                Native.counterClose(counters.remove(r.id));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
        // stopped since it was listed: the catalog has its stop position now
        Recording again = recordings().get(r.id);
        return again != null && again.stopped() ? again.stop : r.start;
    }

    /** The walk state of [from, ...) up to `limit` (an active recording: stop before an unfinished message). */
    private static long[] walkState(Recording r, long from, long to, long rowLimit) {
        long[] state = new long[Native.S_LENGTH];
        state[Native.S_CURSOR] = Math.max(r.start, AeronScan.floorTerm(from, r.termLength));
        state[Native.S_FROM] = from;
        state[Native.S_TO] = to;
        state[Native.S_END_LOW] = Long.MIN_VALUE;
        state[Native.S_END_HIGH] = Long.MAX_VALUE;
        state[Native.S_PARTIAL_OK] = 1;
        state[Native.S_ROW_LIMIT] = rowLimit;
        return state;
    }

    /** The position after the messages that start in [from, to) and are recorded whole by `stop`, at
     *  most rowLimit of them (0: any number): a message boundary (stream_reader.py's end_after_rows). */
    private long boundary(Recording r, long from, long to, long stop, long rowLimit) {
        long[] state = walkState(r, from, to, rowLimit);
        try {
            Native.count(options.archiveDir, r.id, r.start, stop, r.termLength, r.segmentLength, state);
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
        return Math.max(from, state[Native.S_CURSOR]);
    }

    @Override
    public Offset initialOffset() {
        Map<Long, Recording> recordings = recordings();
        if (options.recordingIds != null) {
            List<Long> missing = new ArrayList<>();
            for (long id : options.recordingIds) {
                if (!recordings.containsKey(id)) {
                    missing.add(id);
                }
            }
            if (!missing.isEmpty()) {
                throw new Options.OptionException("recordings " + missing + " (recordingIds) are not in the archive: "
                    + "list the recordings with `aeron-async recordings list`");
            }
        }
        List<Long> unknown = new ArrayList<>();
        for (Long id : options.startingMap.keySet()) {
            if (!recordings.containsKey(id)) {
                unknown.add(id);
            }
        }
        if (!unknown.isEmpty()) {
            throw new Options.OptionException("startingPositions names recordings " + unknown
                + " that are not among the selected recordings in the archive");
        }
        Map<Long, Long> positions = new TreeMap<>();
        for (Recording r : recordings.values()) {
            long end = recordedEnd(r);
            long start = Options.resolve("startingPositions", options.starting, options.startingMap, Options.EARLIEST,
                r, end);
            positions.put(r.id, start);
        }
        return new Positions(positions);
    }

    @Override
    public ReadLimit getDefaultReadLimit() {
        if (options.maxRecordsPerTrigger > 0) {
            return ReadLimit.maxRows(options.maxRecordsPerTrigger);
        }
        if (options.maxBytesPerTrigger > 0) {
            return ReadLimit.maxBytes(options.maxBytesPerTrigger);
        }
        return ReadLimit.allAvailable();
    }

    @Override
    public void prepareForTriggerAvailableNow() {
        target = new HashMap<>();
        for (Recording r : recordings().values()) {
            target.put(r.id, recordedEnd(r));
        }
    }

    @Override
    public Offset latestOffset() {
        throw new UnsupportedOperationException("latestOffset(start, limit) is the one Spark calls for this source");
    }

    /** `budget` split among the keys in proportion to their amounts (floor, the remainder to the first
     *  ones in key order): stream_reader.py's share. */
    static Map<Long, Long> share(long budget, Map<Long, Long> amounts) {
        long total = amounts.values().stream().mapToLong(Long::longValue).sum();
        if (total <= budget) {
            return new TreeMap<>(amounts);
        }
        Map<Long, Long> shares = new TreeMap<>();
        long given = 0;
        for (Map.Entry<Long, Long> e : amounts.entrySet()) {
            long part = java.math.BigInteger.valueOf(budget).multiply(java.math.BigInteger.valueOf(e.getValue()))
                .divide(java.math.BigInteger.valueOf(total)).longValue();
            shares.put(e.getKey(), part);
            given += part;
        }
        long left = budget - given;
        for (Map.Entry<Long, Long> e : amounts.entrySet()) {
            if (left <= 0) {
                break;
            }
            if (shares.get(e.getKey()) < e.getValue()) {
                shares.put(e.getKey(), shares.get(e.getKey()) + 1);
                left--;
            }
        }
        return shares;
    }

    @Override
    public Offset latestOffset(Offset startOffset, ReadLimit limit) {
        Map<Long, Long> begin = ((Positions) deserializeOffset(startOffset.json())).positions;
        Map<Long, Recording> recordings = recordings();
        Map<Long, Long> positions = new TreeMap<>(begin);
        Map<Long, long[]> available = new TreeMap<>();
        for (Long id : begin.keySet()) {
            if (!recordings.containsKey(id)) {
                dataLoss("recording " + id + " is gone from the archive (purged) at position " + begin.get(id));
                positions.remove(id);
            }
        }
        for (Recording r : recordings.values()) {
            if (target != null && !target.containsKey(r.id)) {
                continue; // appeared after an AvailableNow query started
            }
            long low = begin.getOrDefault(r.id, r.start);
            long end = recordedEnd(r);
            if (low < r.start) {
                dataLoss("recording " + r.id + " now starts at " + r.start + ": [" + low + ", " + r.start + ") is gone");
                low = r.start;
            }
            if (end < low) {
                dataLoss("recording " + r.id + " now ends at " + end + " (truncated), before the offset " + low);
                low = end;
            }
            if (target != null) {
                end = Math.max(low, Math.min(end, target.get(r.id)));
            }
            positions.put(r.id, low);
            if (end > low) {
                available.put(r.id, new long[] {low, end});
            }
        }
        long maxBytes = limit instanceof ReadMaxBytes b ? b.maxBytes() : options.maxBytesPerTrigger;
        long maxRows = limit instanceof ReadMaxRows m ? m.maxRows() : 0;
        if (!(limit instanceof ReadAllAvailable) && maxBytes > 0) {
            Map<Long, Long> amounts = new TreeMap<>();
            available.forEach((id, range) -> amounts.put(id, range[1] - range[0]));
            Map<Long, Long> shares = share(maxBytes, amounts);
            Map<Long, long[]> cut = new TreeMap<>();
            available.forEach((id, range) -> {
                if (shares.get(id) > 0) {
                    cut.put(id, new long[] {range[0], range[0] + shares.get(id)});
                }
            });
            available = cut;
        }
        Map<Long, Long> rows = null;
        if (!(limit instanceof ReadAllAvailable) && maxRows > 0) {
            Map<Long, Long> amounts = new TreeMap<>();
            available.forEach((id, range) -> amounts.put(id, range[1] - range[0]));
            rows = share(maxRows, amounts);
        }
        for (Map.Entry<Long, long[]> e : available.entrySet()) {
            Recording r = recordings.get(e.getKey());
            long[] range = e.getValue();
            long rowLimit = rows == null ? 0 : rows.get(e.getKey());
            if (rows != null && rowLimit <= 0) {
                continue;
            }
            if (options.remote) {
                // a replay waits for a message recorded in part: the batch ends where the limits put it
                long[] counted = rows == null ? new long[] {1, range[1]} : endAfterRows(r, range, rowLimit);
                if (counted[0] > 0) {
                    positions.put(e.getKey(), counted[1]);
                }
                continue;
            }
            // a stopped recording's micro-batch may end anywhere (a message belongs to the batch its
            // start is in); an active one's ends at a message boundary it has recorded whole
            long end = rows != null ? boundary(r, range[0], range[1], r.stopped() ? r.stop : range[1], rowLimit)
                : r.stopped() ? range[1] : boundary(r, range[0], range[1], range[1], 0);
            positions.put(e.getKey(), end);
        }
        return new Positions(positions);
    }

    /** {rows, end} of a remote range's first rowLimit messages, counted over a replay. */
    private long[] endAfterRows(Recording r, long[] range, long rowLimit) {
        try {
            return archive().endAfterRows(new RangePartition(options, r, range[0], range[1]), rowLimit);
        } catch (IOException e) {
            throw failed(e);
        }
    }

    private void dataLoss(String message) {
        Readers.dataLoss(options.failOnDataLoss, message, null);
    }

    @Override
    public InputPartition[] planInputPartitions(Offset start, Offset end) {
        Map<Long, Long> begin = ((Positions) deserializeOffset(start.json())).positions;
        Map<Long, Long> finish = ((Positions) deserializeOffset(end.json())).positions;
        long[] bounds = Filters.endBounds(filters);
        List<InputPartition> ranges = new ArrayList<>();
        for (Map.Entry<Long, Long> e : finish.entrySet()) {
            Recording r = known.get(e.getKey());
            if (r == null) {
                r = recordings().get(e.getKey());
            }
            if (r == null) {
                dataLoss("recording " + e.getKey() + " is gone from the archive (purged): its range [" + begin.get(
                    e.getKey()) + ", " + e.getValue() + ") cannot be read");
                continue;
            }
            long low = begin.getOrDefault(r.id, r.start), high = e.getValue();
            if (high <= low || !Filters.keeps(filters, r)) {
                continue;
            }
            long term = r.termLength;
            long chunk = Math.max(term, options.maxBytesPerPartition - options.maxBytesPerPartition % term);
            for (long from = low; from < high; ) {
                long to = Math.min(high, (Math.floorDiv(from, chunk) + 1) * chunk);
                // the walk stops at the batch's end (a message boundary recorded whole): a message
                // starting before `to` ends by then; a replay reads on until it does
                ranges.add(options.remote ? new RangePartition(options, r, from, to)
                    : new RangePartition(options.archiveDir, r, from, to, bounds[0], bounds[1],
                    options.failOnDataLoss, r.stopped() ? r.stop : high));
                from = to;
            }
        }
        return ranges.toArray(new InputPartition[0]);
    }

    /** Real-time Mode: a task per selected recording, reading from the batch's start for as long as the
     *  batch lasts (RealTimeReader). */
    @Override
    public InputPartition[] planInputPartitions(Offset start) {
        if (options.remote) {
            throw new Options.OptionException("Real-time Mode reads the recordings' segment files on each host: "
                + "give option archiveDir (the archive's directory there), or read the remote archive with a "
                + "micro-batch trigger");
        }
        Map<Long, Long> begin = ((Positions) deserializeOffset(start.json())).positions;
        long[] bounds = Filters.endBounds(filters);
        List<InputPartition> tasks = new ArrayList<>();
        for (Recording r : recordings().values()) {
            if (Filters.keeps(filters, r)) {
                tasks.add(new RealTimeReader.Partition(options.archiveDir, options.aeronDir, r,
                    begin.getOrDefault(r.id, r.start), bounds[0], bounds[1]));
            }
        }
        return tasks.toArray(new InputPartition[0]);
    }

    @Override
    public Offset mergeOffsets(org.apache.spark.sql.connector.read.streaming.PartitionOffset[] offsets) {
        Map<Long, Long> positions = new TreeMap<>();
        for (org.apache.spark.sql.connector.read.streaming.PartitionOffset offset : offsets) {
            RealTimeReader.Position p = (RealTimeReader.Position) offset;
            positions.merge(p.recordingId, p.position, Math::max);
        }
        return new Positions(positions);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        return new Readers(schema, null);
    }

    @Override
    public void commit(Offset end) {
        // nothing to release: what the archive keeps is the archive's policy (purge, truncate)
    }

    @Override
    public synchronized void stop() {
        for (long counter : counters.values()) {
            Native.counterClose(counter);
        }
        counters.clear();
        if (archive != null) {
            archive.close();
            archive = null;
        }
    }
}
