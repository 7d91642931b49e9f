package aeron.spark;

import java.io.IOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * One task attempt of the JVM sink: aeron_async/spark/sink.py's publish() in the JVM. The rows'
 * messages are copied into a direct buffer (no object per message on the native side) and offered
 * in runs of equal reserved values through the C client's offer_batch, on an exclusive publication
 * of the attempt's own (one session, one recording); back pressure is waited out, bounded by
 * offerTimeout without progress. A finished attempt ends with the empty end-marker message; with
 * durable=true commit() returns once the archive has recorded that session up to the publication's
 * position: asked through the archive's control session when the options name one (controlChannel,
 * controlStreamId, responseChannel, responseStreamId or timeout: as the Python sink), else read from
 * the recording's rec-pos counter in the executor's driver's CnC file. An attempt without rows
 * publishes nothing.
 */
final class SinkWriter implements DataWriter<InternalRow> {
    private static final int ROWS = 4096;
    private static final int DATA_BYTES = 1 << 20;
    private static final int BACK_PRESSURED = -2, CLOSED = -4, MAX_POSITION_EXCEEDED = -5;

    /** What one task attempt published (sink.py's SinkCommitMessage). */
    static final class Commit implements WriterCommitMessage, Serializable {
        private static final long serialVersionUID = 1L;
        final int partition, attempt, sessionId;
        final long messages, position, recordingId;   // recordingId -1: not durable

        Commit(int partition, int attempt, int sessionId, long messages, long position, long recordingId) {
            this.partition = partition;
            this.attempt = attempt;
            this.sessionId = sessionId;
            this.messages = messages;
            this.position = position;
            this.recordingId = recordingId;
        }
    }

    /** A write the sink could not finish (sink.py's SinkError / SinkTimeoutError). */
    static final class SinkException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        SinkException(String message, Throwable cause) {
            super("aeron sink: " + message, cause);
        }
    }

    // one client per executor JVM and driver directory, reused by later tasks (sink.py's _client)
    private static final Map<String, Long> CLIENTS = new HashMap<>();

    private final SinkOptions options;
    private final int partition, attempt;
    private final long reserved, endReserved;
    private final int dataIndex, reservedIndex;
    private final boolean dataIsString, reservedIsInt;
    private ByteBuffer data = ByteBuffer.allocateDirect(DATA_BYTES).order(ByteOrder.nativeOrder());
    private final ByteBuffer offsets = ByteBuffer.allocateDirect((ROWS + 1) * 4).order(ByteOrder.nativeOrder());
    private final ByteBuffer endOffsets = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
    private final long[] values = new long[ROWS];
    private int rows;
    private long publication;
    private int sessionId;
    private long messages;

    SinkWriter(SinkOptions options, int kind, long batch, int partition, int attempt, int dataIndex,
               boolean dataIsString, int reservedIndex, boolean reservedIsInt) {
        if (partition > (1 << 20) - 1) {
            throw new Options.OptionException("partition id " + partition + " is past the sink's limit of "
                + (1 << 20) + " partitions: repartition the DataFrame into fewer partitions before writing it");
        }
        this.options = options;
        this.partition = partition;
        this.attempt = attempt;
        this.reserved = encode(kind, batch, partition, attempt, false);
        this.endReserved = encode(kind, batch, partition, attempt, true);
        this.dataIndex = dataIndex;
        this.dataIsString = dataIsString;
        this.reservedIndex = reservedIndex;
        this.reservedIsInt = reservedIsInt;
    }

    /** provenance.py's encode: tag 0b10, kind, end, batch (32 bits), partition (20), attempt (8). */
    static long encode(int kind, long batch, int partition, int attempt, boolean end) {
        return (2L << 62) | ((long) kind << 61) | ((end ? 1L : 0L) << 60) | ((batch & 0xFFFFFFFFL) << 28)
            | ((long) partition << 8) | (attempt & 0xFF);
    }

    @Override
    public void write(InternalRow row) throws IOException {
        byte[] bytes = row.isNullAt(dataIndex) ? new byte[0]
            : dataIsString ? row.getUTF8String(dataIndex).getBytes() : row.getBinary(dataIndex);
        if (rows == ROWS || data.position() + bytes.length > data.capacity()) {
            flush();
            if (bytes.length > data.capacity()) {
                data = ByteBuffer.allocateDirect(bytes.length).order(ByteOrder.nativeOrder());
            }
        }
        data.put(bytes);
        offsets.putInt((rows + 1) * 4, data.position());
        values[rows] = reservedIndex < 0 || row.isNullAt(reservedIndex) ? reserved
            : reservedIsInt ? row.getInt(reservedIndex) : row.getLong(reservedIndex);
        rows++;
    }

    private void flush() throws IOException {
        if (rows == 0) {
            return;
        }
        if (publication == 0) {
            open();
        }
        offsets.putInt(0, 0);
        int start = 0;
        for (int index = 1; index <= rows; index++) {
            if (index == rows || values[index] != values[start]) {
                offer(data, offsets, start, index - start, values[start]);
                start = index;
            }
        }
        messages += rows;
        rows = 0;
        data.clear();
    }

    private String where() {
        return options.channel + " stream " + options.streamId + " (session " + sessionId + ")";
    }

    private static long client(SinkOptions options) throws IOException {
        String key = options.aeronDir == null ? "" : options.aeronDir;
        synchronized (CLIENTS) {
            Long client = CLIENTS.get(key);
            if (client != null && !Native.clientAlive(client)) {
                Native.clientClose(client);   // timed out by the driver (a stalled executor), or the driver is gone
                CLIENTS.remove(key);
                client = null;
            }
            if (client == null) {
                Native.load();
                client = Native.clientConnect(options.aeronDir, (long) (options.connectTimeout * 1000));
                CLIENTS.put(key, client);
            }
            return client;
        }
    }

    private void open() throws IOException {
        long timeoutMs = (long) (options.connectTimeout * 1000);
        publication = Native.publicationAdd(client(options), options.channel, options.streamId, timeoutMs);
        sessionId = Native.publicationSessionId(publication);
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (!Native.publicationConnected(publication)) {
            if (System.nanoTime() > deadline) {
                String where = where();
                close();
                throw new SinkException("no subscriber connected to " + where + " within "
                    + seconds(options.connectTimeout) + " s: the sink publishes only to a stream someone reads "
                    + "(start the subscriber, or the archive's recording of it, first), or raise connectTimeout",
                    null);
            }
            LockSupport.parkNanos(100_000);
        }
    }

    private static String seconds(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
    }

    /** Offers every message, waiting out back pressure; no progress for offerTimeout throws. */
    private void offer(ByteBuffer bytes, ByteBuffer ends, int from, int count, long reservedValue) throws IOException {
        int done = 0;
        long deadline = 0;
        int idle = 0;
        while (done < count) {
            long result = Native.publicationOffer(publication, bytes, ends, from + done, count - done, reservedValue);
            if (result > 0) {
                done += (int) result;
                deadline = 0;
                idle = 0;
                continue;
            }
            if (result == CLOSED) {
                throw new SinkException(where() + " was closed while the task offered to it", null);
            }
            if (result == MAX_POSITION_EXCEEDED) {
                throw new Options.OptionException(where() + " reached its maximum position: use a longer term-length "
                    + "on the channel");
            }
            long now = System.nanoTime();
            if (deadline == 0) {
                deadline = now + (long) (options.offerTimeout * 1e9);
            } else if (now > deadline) {
                String state = result == BACK_PRESSURED || result == -3 ? "back-pressured" : "not connected";
                throw new SinkException(where() + " stayed " + state + " for " + seconds(options.offerTimeout)
                    + " s with " + (count - done) + " messages of this batch unsent (" + (messages + done)
                    + " sent by this task): the reader is too slow or gone; raise offerTimeout if it only pauses",
                    null);
            }
            // back off as IdleStrategy("backoff"): spin, yield, then park up to 1 ms
            if (idle < 10) {
                Thread.onSpinWait();
            } else if (idle < 20) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(Math.min(1_000_000L, 1_000L << Math.min(idle - 20, 10)));
            }
            idle++;
        }
    }

    @Override
    public WriterCommitMessage commit() throws IOException {
        flush();
        if (publication == 0) {
            return new Commit(partition, attempt, 0, 0, 0, -1);
        }
        offer(data, endOffsets, 0, 1, endReserved);
        long position = Native.publicationPosition(publication);
        long recordingId = !options.durable ? -1 : options.control ? waitThroughArchive(position)
            : waitRecorded(position);
        return new Commit(partition, attempt, sessionId, messages, position, recordingId);
    }

    /** durable=true without the archive control options: until the recording of this session and
     *  stream has recorded `position` (its rec-pos counter in the driver's CnC file); its recording id. */
    private long waitRecorded(long position) throws IOException {
        long deadline = System.nanoTime() + (long) (options.durableTimeout * 1e9);
        while (true) {
            long[] found = Native.recordedBySession(options.aeronDir, sessionId, options.streamId);
            if (found[0] >= 0 && found[1] >= position) {
                return found[0];
            }
            if (System.nanoTime() > deadline) {
                throw notRecorded(position, found[0] < 0 ? "no recording of it appeared in the counters of this "
                    + "executor's media driver; an archive that records through another driver is reached "
                    + "through its control session: give the archive's controlChannel (and responseChannel)"
                    : "recording " + found[0] + " is at " + found[1]);
            }
            LockSupport.parkNanos(2_000_000);
        }
    }

    /** durable=true with an archive control option: sink.py's _wait_recorded, through a control session
     *  of the archive the options name (Remote, closed before returning): the newest recording of this
     *  session and stream, until its recorded position has reached `position`; its recording id. */
    private long waitThroughArchive(long position) throws IOException {
        long deadline = System.nanoTime() + (long) (options.durableTimeout * 1e9);
        try (Remote archive = new Remote(options)) {
            long recordingId = -1;
            while (true) {
                if (recordingId < 0) {
                    recordingId = archive.findLastMatchingRecording("", options.streamId, sessionId);
                }
                if (recordingId >= 0 && archive.maxRecordedPosition(recordingId) >= position) {
                    return recordingId;
                }
                if (System.nanoTime() > deadline) {
                    throw notRecorded(position, recordingId < 0 ? "no recording of it appeared"
                        : "recording " + recordingId + " is at " + archive.maxRecordedPosition(recordingId));
                }
                LockSupport.parkNanos(2_000_000);
            }
        }
    }

    /** sink.py's SinkTimeoutError of durable=true, `what` saying how far the archive got. */
    private SinkException notRecorded(long position, String what) {
        return new SinkException("durable=true: the archive did not record " + where() + " up to position "
            + position + " within " + seconds(options.durableTimeout) + " s (" + what + "): start a recording of "
            + "the sink's channel and stream on the archive (archive.start_recording), or raise durableTimeout",
            null);
    }

    @Override
    public void abort() {
        close();
    }

    @Override
    public void close() {
        if (publication != 0) {
            Native.publicationClose(publication);
            publication = 0;
        }
    }
}
