package aeron.spark;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.LockSupport;

import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.streaming.PartitionOffset;
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Real-time Mode (docs/spark.md, "The JVM connector"): one task per recording reads its messages
 * as the archive records them, from the batch's start offset, for as long as Spark's batch lasts:
 * the recording's rec-pos counter is polled (kept open in the driver's CnC file) and each new stretch
 * walked, up to the last message recorded whole, into the same column buffers through a native
 * reader that keeps the segment file mapped from poll to poll (remapped only when the recording
 * crosses into its next segment file, unmapped at close); rows are handed one at a time. The task's
 * offset is the end of the last message it handed on.
 */
final class RealTimeReader implements SupportsRealTimeRead<InternalRow> {
    static final int ROWS = 4096;
    static final long IDLE_NANOS = 100_000;

    /** A real-time task's work: one recording from `from` on. */
    static final class Partition implements InputPartition {
        private static final long serialVersionUID = 1L;

        final String archiveDir, aeronDir;
        final Recording recording;
        final long from, endLow, endHigh;

        Partition(String archiveDir, String aeronDir, Recording recording, long from, long endLow, long endHigh) {
            this.archiveDir = archiveDir;
            this.aeronDir = aeronDir;
            this.recording = recording;
            this.from = from;
            this.endLow = endLow;
            this.endHigh = endHigh;
        }
    }

    /** Where a task stands: the recording, and the end of the last message handed on. */
    static final class Position implements PartitionOffset {
        private static final long serialVersionUID = 1L;

        final long recordingId, position;

        Position(long recordingId, long position) {
            this.recordingId = recordingId;
            this.position = position;
        }
    }

    private final Partition p;
    private final long[] state = new long[Native.S_LENGTH];
    private ByteBuffer data = Readers.direct(Readers.DATA_CAPACITY);
    private final ByteBuffer offsets = Readers.direct(4L * (ROWS + 1));
    private final ByteBuffer positions = Readers.direct(8L * ROWS);
    private final ByteBuffer reserved = Readers.direct(8L * ROWS);
    private long counter;
    private long reader;        // the native segment reader, 0 until the first read and after close
    private final int[] columns;  // the schema's columns, as COLUMN_* kinds
    private final UnsafeRowWriter out;
    private byte[] scratch = new byte[256];
    private long stop;          // the stop position once the recording stopped, else -1
    private int rows, index;
    private long handed;        // the end of the last message handed on
    private InternalRow current;

    static final int COLUMN_DATA = 0, COLUMN_POSITION = 1, COLUMN_RESERVED = 2, COLUMN_RECORDING = 3,
        COLUMN_SESSION = 4, COLUMN_STREAM = 5, COLUMN_CHANNEL = 6;

    RealTimeReader(Partition p, StructType schema) {
        Native.load();
        this.p = p;
        StructField[] fields = schema.fields();
        columns = new int[fields.length];
        for (int c = 0; c < fields.length; c++) {
            columns[c] = switch (fields[c].name()) {
                case "data" -> COLUMN_DATA;
                case "position" -> COLUMN_POSITION;
                case "reserved_value" -> COLUMN_RESERVED;
                case "recording_id" -> COLUMN_RECORDING;
                case "session_id" -> COLUMN_SESSION;
                case "stream_id" -> COLUMN_STREAM;
                default -> COLUMN_CHANNEL;
            };
        }
        out = new UnsafeRowWriter(fields.length, 64);
        Recording r = p.recording;
        stop = r.stopped() ? r.stop : -1;
        state[Native.S_CURSOR] = Math.max(r.start, AeronScan.floorTerm(p.from, r.termLength));
        state[Native.S_FROM] = p.from;
        state[Native.S_TO] = Long.MAX_VALUE;
        state[Native.S_END_LOW] = p.endLow;
        state[Native.S_END_HIGH] = p.endHigh;
        state[Native.S_PARTIAL_OK] = 1;
        handed = p.from;
    }

    /** How far the recording is recorded now. */
    private long recorded() throws IOException {
        if (stop >= 0) {
            return stop;
        }
        if (counter == 0) {
            counter = Native.counterOpen(p.aeronDir, p.recording.id);
        }
        long value = counter == 0 ? -1 : Native.counterValue(counter, p.recording.id);
        if (value >= 0) {
            return value;
        }
        for (Recording r : AeronScan.catalog(p.archiveDir)) {  // stopped since: the catalog has where
            if (r.id == p.recording.id && r.stopped()) {
                stop = r.stop;
                return stop;
            }
        }
        return state[Native.S_CURSOR];
    }

    /** Reads what was recorded since the last call into the buffers; whether it gave rows. */
    private boolean fill() throws IOException {
        long limit = recorded();
        if (limit <= state[Native.S_CURSOR]) {
            return false;
        }
        if (reader == 0) {
            Recording r = p.recording;
            reader = Native.readerOpen(p.archiveDir, r.id, r.start, r.termLength, r.segmentLength);
        }
        while (true) {
            state[Native.S_ROWS] = 0;
            state[Native.S_DATA_LENGTH] = 0;
            Native.readerRead(reader, limit, state, data, offsets, positions, reserved);
            if (state[Native.S_REQUIRED] > 0) {
                data = Readers.direct(Math.max(state[Native.S_REQUIRED], Math.min(Integer.MAX_VALUE,
                    2L * data.capacity())));
                continue;
            }
            rows = (int) state[Native.S_ROWS];
            index = 0;
            return rows > 0;
        }
    }

    @Override
    public RecordStatus nextWithTimeout(Long timeoutMs) throws IOException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (true) {
            if (index < rows) {
                current = row(index++);
                return RecordStatus.newStatusWithoutArrivalTime(true);
            }
            if (!fill()) {
                if (System.nanoTime() - deadline >= 0) {
                    return RecordStatus.newStatusWithoutArrivalTime(false);
                }
                // a stopped query kills its tasks: the batch may have minutes to run (the trigger's
                // checkpoint interval), so the idle loop ends the task at once rather than at its deadline
                TaskContext task = TaskContext.get();
                if (task != null) {
                    task.killTaskIfInterrupted();
                } else if (Thread.currentThread().isInterrupted()) {
                    throw new IOException("aeron data source: the Real-time Mode task was interrupted");
                }
                LockSupport.parkNanos(IDLE_NANOS);
            }
        }
    }

    @Override
    public boolean next() throws IOException {
        while (true) {
            if (nextWithTimeout(1000L).hasRecord()) {
                return true;
            }
            if (stop >= 0 && state[Native.S_CURSOR] >= stop) {
                return false;
            }
        }
    }

    /** Row i of the buffers as an UnsafeRow written into the same reused buffer row after row (Spark
     *  copies a row it keeps), so a row costs no allocation. */
    private InternalRow row(int i) {
        Recording r = p.recording;
        handed = positions.getLong(8 * i);
        out.reset();
        out.zeroOutNullBytes();
        for (int c = 0; c < columns.length; c++) {
            switch (columns[c]) {
                case COLUMN_DATA -> {
                    int start = offsets.getInt(4 * i), length = offsets.getInt(4 * i + 4) - start;
                    if (scratch.length < length) {
                        scratch = new byte[Math.max(length, 2 * scratch.length)];
                    }
                    data.get(start, scratch, 0, length);
                    out.write(c, scratch, 0, length);
                }
                case COLUMN_POSITION -> out.write(c, handed);
                case COLUMN_RESERVED -> out.write(c, reserved.getLong(8 * i));
                case COLUMN_RECORDING -> out.write(c, r.id);
                case COLUMN_SESSION -> out.write(c, r.sessionId);
                case COLUMN_STREAM -> out.write(c, r.streamId);
                default -> out.write(c, channel());
            }
        }
        return out.getRow();
    }

    private UTF8String channel;

    private UTF8String channel() {
        if (channel == null) {
            channel = UTF8String.fromString(p.recording.channel);
        }
        return channel;
    }

    @Override
    public InternalRow get() {
        return current;
    }

    @Override
    public PartitionOffset getOffset() {
        return new Position(p.recording.id, handed);
    }

    @Override
    public void close() {
        if (counter != 0) {
            Native.counterClose(counter);
            counter = 0;
        }
        if (reader != 0) {
            Native.readerClose(reader);
            reader = 0;
        }
    }
}
