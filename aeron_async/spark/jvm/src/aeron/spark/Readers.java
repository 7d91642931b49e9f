package aeron.spark;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** The executors' side: columnar batches of a range's messages, or an aggregate's one row. */
final class Readers implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;
    static final int BATCH_ROWS = 65536;
    static final int DATA_CAPACITY = 4 << 20;

    private final StructType schema;
    private final int[] aggregates;

    Readers(StructType schema, int[] aggregates) {
        this.schema = schema;
        this.aggregates = aggregates;
    }

    @Override
    public boolean supportColumnarReads(InputPartition partition) {
        return aggregates == null && partition instanceof RangePartition;
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
        if (partition instanceof RealTimeReader.Partition p) {
            return new RealTimeReader(p, schema);
        }
        return new AggregateReader((AggregatePartition) partition, aggregates);
    }

    @Override
    public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
        RangePartition range = (RangePartition) partition;
        return range.remote != null ? new RemoteRangeReader(range, schema) : new RangeReader(range, schema);
    }

    static ColumnarBatch columns(Recording r, StructType schema, int rows, ByteBuffer data, ByteBuffer offsets,
                                 ByteBuffer positions, ByteBuffer reserved) {
        StructField[] fields = schema.fields();
        ColumnVector[] vectors = new ColumnVector[fields.length];
        for (int i = 0; i < fields.length; i++) {
            vectors[i] = switch (fields[i].name()) {
                case "data" -> new Vectors.Binary(data, offsets);
                case "position" -> new Vectors.Longs(positions);
                case "reserved_value" -> new Vectors.Longs(reserved);
                case "recording_id" -> new Vectors.ConstantLong(r.id);
                case "session_id" -> new Vectors.ConstantInt(r.sessionId);
                case "stream_id" -> new Vectors.ConstantInt(r.streamId);
                default -> new Vectors.ConstantString(r.channel);
            };
        }
        ColumnarBatch out = new ColumnarBatch(vectors);
        out.setNumRows(rows);
        return out;
    }

    /** Data loss as failOnDataLoss says, in one wording: thrown when `fail`, else logged (the read goes
     *  on with what is left). */
    static void dataLoss(boolean fail, String message, Throwable cause) {
        if (fail) {
            throw new IllegalStateException("aeron data source: " + message
                + " (set failOnDataLoss=false to read what is left instead)", cause);
        }
        System.err.println("aeron data source: " + message + "; reading what is left (failOnDataLoss=false)");
    }

    static ByteBuffer direct(long bytes) {
        return ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
    }

    /** A data buffer for a message of `required` bytes that did not fit `data`: twice as large, or
     *  larger (a binary column holds at most Integer.MAX_VALUE bytes). */
    static ByteBuffer grown(ByteBuffer data, long required, String atLeast) throws IOException {
        if (required > Integer.MAX_VALUE) {
            throw new IOException("a message of " + atLeast + required + " bytes does not fit a binary column");
        }
        return direct(Math.max(required, Math.min(Integer.MAX_VALUE, 2L * data.capacity())));
    }

    /** What both range readers hold: the partition, the query's columns, the column buffers the native
     *  side fills (reused batch after batch; `data` grows for a larger message) and the batch made of
     *  them last. */
    abstract static class ColumnsReader implements PartitionReader<ColumnarBatch> {
        final RangePartition p;
        final StructType schema;
        ByteBuffer data = direct(DATA_CAPACITY);
        final ByteBuffer offsets = direct(4L * (BATCH_ROWS + 1));
        final ByteBuffer positions = direct(8L * BATCH_ROWS);
        final ByteBuffer reserved = direct(8L * BATCH_ROWS);
        ColumnarBatch batch;
        boolean done;

        ColumnsReader(RangePartition p, StructType schema) {
            Native.load();
            this.p = p;
            this.schema = schema;
        }

        /** The rows left once the sink's end markers are taken out (dropRepeats over a replay: the
         *  local walk skips them itself), the kept rows moved down in place; rows when there is none. */
        int withoutEndMarkers(int rows) {
            int first = 0;
            while (first < rows && !Repeats.isEndMarker(reserved.getLong(8 * first))) {
                first++;
            }
            if (first == rows) {
                return rows;
            }
            int kept = first, write = offsets.getInt(4 * first);
            for (int row = first + 1; row < rows; row++) {
                long value = reserved.getLong(8 * row);
                if (Repeats.isEndMarker(value)) {
                    continue;
                }
                int from = offsets.getInt(4 * row), to = offsets.getInt(4 * (row + 1));
                // offsets[kept + 1] is written after offsets[row] and offsets[row + 1] were read (kept < row)
                ByteBuffer source = data.duplicate();
                source.limit(to).position(from);
                data.duplicate().position(write).put(source);
                positions.putLong(8 * kept, positions.getLong(8 * row));
                reserved.putLong(8 * kept, value);
                write += to - from;
                kept++;
                offsets.putInt(4 * kept, write);
            }
            return kept;
        }

        ColumnarBatch build(int rows) {
            return columns(p.recording, schema, rows, data, offsets, positions, reserved);
        }

        @Override
        public ColumnarBatch get() {
            return batch;
        }
    }

    /** A range's messages in batches of up to BATCH_ROWS rows; the buffers, and the native reader with
     *  its mapped segment file, are reused batch after batch. */
    static final class RangeReader extends ColumnsReader {
        private final long[] state;
        private long reader;

        RangeReader(RangePartition p, StructType schema) {
            super(p, schema);
            this.state = p.initialState();
        }

        @Override
        public boolean next() throws IOException {
            Recording r = p.recording;
            while (!done) {
                state[Native.S_ROWS] = 0;
                state[Native.S_DATA_LENGTH] = 0;
                long before = state[Native.S_CURSOR];
                try {
                    if (reader == 0) {
                        reader = Native.readerOpen(p.archiveDir, r.id, r.start, r.termLength, r.segmentLength);
                    }
                    Native.readerRead(reader, p.limit, state, data, offsets, positions, reserved);
                } catch (IOException e) {
                    dataLoss(p.failOnDataLoss, e.getMessage(), e);
                    done = true;
                    return false;
                }
                long required = state[Native.S_REQUIRED];
                if (required > 0) {
                    data = grown(data, required, "");
                    continue;
                }
                int rows = (int) state[Native.S_ROWS];
                // an active recording read up to its recorded position: a walk that stops with nothing
                // read stands before a message not recorded whole by then, which is not this read's
                done = state[Native.S_DONE] == 1 || (rows == 0 && state[Native.S_CURSOR] == before);
                if (rows > 0) {
                    batch = build(rows);
                    return true;
                }
            }
            return false;
        }

        @Override
        public void close() {
            batch = null;
            if (reader != 0) {
                Native.readerClose(reader);
                reader = 0;
            }
        }
    }

    /** A remote archive's range (columns.py's read_range): its own control session, the range as the
     *  archive holds it now (data loss as failOnDataLoss says), one replay polled into the column
     *  buffers (aa_spark_jni_remote.c), which are reused batch after batch. */
    static final class RemoteRangeReader extends ColumnsReader {
        private final long[] out = new long[4];
        private final Remote shared;   // the caller's session (kept open), else null: the reader's own
        private Remote archive;
        private long replay;
        private long high;

        RemoteRangeReader(RangePartition p, StructType schema) {
            this(p, schema, null);
        }

        RemoteRangeReader(RangePartition p, StructType schema, Remote shared) {
            super(p, schema);
            this.shared = shared;
        }

        private void dataLoss(String message) {
            Readers.dataLoss(p.failOnDataLoss, message, null);
        }

        /** columns.py's _bounds, then the replay: false when nothing of the range is left. */
        private boolean open() throws IOException {
            archive = shared != null ? shared : new Remote(p.remote);
            long id = p.recording.id;
            int term = p.recording.termLength;
            Recording now = archive.recording(id);
            if (now == null) {
                dataLoss("recording " + id + " is gone from the archive (purged): [" + p.from + ", " + p.to
                    + ") cannot be read");
                return false;
            }
            long low = p.from;
            high = p.to;
            if (low < now.start) {
                dataLoss("recording " + id + " now starts at " + now.start + ": [" + low + ", " + now.start
                    + ") is gone");
                low = now.start;
            }
            if (now.stopped() && high > now.stop) {
                dataLoss("recording " + id + " now stops at " + now.stop + " (truncated): ["
                    + Math.max(low, now.stop) + ", " + high + ") is gone");
                high = now.stop;
            }
            if (low >= high) {
                return false;
            }
            long from = Math.max(now.start, AeronScan.floorTerm(low, term));
            long to = -Math.floorDiv(-high, (long) term) * term;
            if (now.stopped()) {
                to = Math.min(to, now.stop);
            }
            replay = Native.remoteReplayOpen(archive.session, id, from, to - from,
                Remote.localChannel(p.remote.replayChannel), p.remote.replayStreamId, low, high);
            return true;
        }

        @Override
        public boolean next() throws IOException {
            try {
                if (!done && archive == null && !open()) {
                    done = true;
                }
                while (!done) {
                    Native.remoteReplayPoll(replay, out, data, offsets, positions, reserved);
                    if (out[1] > 0) {
                        data = grown(data, out[1], "at least ");
                        continue;
                    }
                    done = out[2] == 1;
                    if (out[3] >= 0) {
                        dataLoss("the replay of recording " + p.recording.id + " ended at " + out[3] + ", before "
                            + high + ": the recording was truncated or purged while it was read");
                    }
                    int rows = p.dropMarkers ? withoutEndMarkers((int) out[0]) : (int) out[0];
                    if (rows > 0) {
                        batch = build(rows);
                        return true;
                    }
                }
            } catch (IOException e) {
                throw new IOException("aeron data source: " + e.getMessage(), e);
            }
            return false;
        }

        @Override
        public void close() {
            batch = null;
            if (replay != 0) {
                Native.remoteReplayClose(replay);
                replay = 0;
            }
            if (archive != null && archive != shared) {
                archive.close();
            }
            archive = null;
        }
    }

    /** count / min(position) / max(position) over every range, from the frame headers alone. */
    static final class AggregateReader implements PartitionReader<InternalRow> {
        private final AggregatePartition p;
        private final int[] aggregates;
        private boolean given;

        AggregateReader(AggregatePartition p, int[] aggregates) {
            Native.load();
            this.p = p;
            this.aggregates = aggregates;
        }

        @Override
        public boolean next() {
            return !given;
        }

        @Override
        public InternalRow get() {
            given = true;
            long count = 0, min = -1, max = -1;
            for (RangePartition range : p.ranges) {
                Recording r = range.recording;
                long[] found;
                try {
                    found = Native.count(range.archiveDir, r.id, r.start, range.limit, r.termLength, r.segmentLength,
                        range.initialState());
                } catch (IOException e) {
                    if (range.failOnDataLoss) {
                        dataLoss(true, e.getMessage(), e);
                    }
                    continue;
                }
                count += found[0];
                if (found[0] > 0) {
                    min = min < 0 ? found[1] : Math.min(min, found[1]);
                    max = Math.max(max, found[2]);
                }
            }
            Object[] values = new Object[aggregates.length];
            for (int i = 0; i < aggregates.length; i++) {
                values[i] = switch (aggregates[i]) {
                    case AeronScan.COUNT -> count;
                    case AeronScan.MIN -> count == 0 ? null : (Object) min;
                    default -> count == 0 ? null : (Object) max;
                };
            }
            return new GenericInternalRow(values);
        }

        @Override
        public void close() {
        }
    }
}
