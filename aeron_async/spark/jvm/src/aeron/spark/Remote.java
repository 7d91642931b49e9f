package aeron.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.types.StructType;

/**
 * A control session with a remote archive (a read without archiveDir, the sink's durable=true wait
 * with the archive control options; docs/spark.md, "The JVM connector"), through the native library
 * (aa_spark_jni_remote.c), as aeron_async/spark/columns.py's open_archive: the options' control and
 * response channels, `{host}` replaced by this host's address.
 */
final class Remote implements AutoCloseable {
    final long session;

    Remote(Options options) {
        this(options.aeronDir, options.controlChannel, options.controlStreamId, options.responseChannel,
            options.responseStreamId, options.timeout);
    }

    /** The sink's durable=true wait (SinkWriter): the control session its write options name. */
    Remote(SinkOptions options) {
        this(options.aeronDir, options.controlChannel, options.controlStreamId, options.responseChannel,
            options.responseStreamId, options.timeout);
    }

    private Remote(String aeronDir, String controlChannel, int controlStreamId, String responseChannel,
                   int responseStreamId, double timeout) {
        Native.load();
        try {
            session = Native.remoteOpen(aeronDir, controlChannel, controlStreamId, localChannel(responseChannel),
                responseStreamId, timeout);
        } catch (IOException e) {
            throw new UncheckedIOException("aeron data source: " + e.getMessage(), e);
        }
    }

    /** `channel` with `{host}` replaced by this host's address (the environment variable
     *  AERON_SPARK_HOST where set, else the address its host name resolves to): columns.py's local_channel. */
    static String localChannel(String channel) {
        if (!channel.contains("{host}")) {
            return channel;
        }
        String host = System.getenv("AERON_SPARK_HOST");
        if (host == null || host.isEmpty()) {
            try {
                host = InetAddress.getByName(InetAddress.getLocalHost().getHostName()).getHostAddress();
            } catch (UnknownHostException e) {
                throw new UncheckedIOException("aeron data source: this host's address for {host}: " + e.getMessage()
                    + " (set AERON_SPARK_HOST)", e);
            }
        }
        return channel.replace("{host}", host);
    }

    /** Recording `id` (null when the archive does not know it). */
    Recording recording(long id) throws IOException {
        List<Recording> found = list(id, null, 0);
        return found.isEmpty() ? null : found.get(0);
    }

    /** The recordings of a stream whose original channel contains `channel` (ListRecordingsForUri). */
    List<Recording> recordings(String channel, int streamId) throws IOException {
        return list(-1, channel, streamId);
    }

    private List<Recording> list(long id, String channel, int streamId) throws IOException {
        Object[] found = Native.remoteList(session, id, channel, streamId);
        long[] fields = (long[]) found[0];
        String[] channels = (String[]) found[1];
        List<Recording> out = new ArrayList<>();
        for (int row = 0; row < fields.length / Native.RECORDING_FIELDS; row++) {
            out.add(new Recording(fields, row, channels[2 * row], channels[2 * row + 1]));
        }
        return out;
    }

    long maxRecordedPosition(long id) throws IOException {
        return Native.remoteMaxRecordedPosition(session, id);
    }

    /** The reserved value of the first message that starts in [position, position + length), replayed
     *  on the options' replay channel; null when there is none (repeats.py's _first_reserved). One row
     *  at a time: the replay stops at the first message, however long the range. */
    Long firstReserved(Options options, long id, long position, long length) throws IOException {
        java.nio.ByteBuffer data = Readers.direct(1 << 16);
        java.nio.ByteBuffer offsets = Readers.direct(8), positions = Readers.direct(8), reserved = Readers.direct(8);
        long[] out = new long[4];
        long replay = Native.remoteReplayOpen(session, id, position, length, localChannel(options.replayChannel),
            options.replayStreamId, position, position + length);
        try {
            while (true) {
                Native.remoteReplayPoll(replay, out, data, offsets, positions, reserved);
                if (out[1] > 0) {
                    data = Readers.grown(data, out[1], "at least ");
                } else if (out[0] > 0) {
                    return reserved.getLong(0);
                } else if (out[2] == 1) {
                    return null;
                }
            }
        } finally {
            Native.remoteReplayClose(replay);
        }
    }

    /** {rows, end}: where the messages of `range` from its start end once `maxRows` of them are read
     *  (the range's end when it holds no more than that), counted over a replay on this session
     *  (columns.py's end_after_rows). */
    long[] endAfterRows(RangePartition range, long maxRows) throws IOException {
        long counted = 0, end = range.to;
        try (Readers.RemoteRangeReader reader = new Readers.RemoteRangeReader(range, new StructType(), this)) {
            while (counted < maxRows && reader.next()) {
                int rows = reader.get().numRows();
                if (counted + rows >= maxRows) {
                    end = reader.positions.getLong(8 * (int) (maxRows - counted - 1));
                    counted = maxRows;
                } else {
                    counted += rows;
                }
            }
        }
        return new long[] {counted, end};
    }

    /** The newest recording of `streamId` and `sessionId` whose original channel contains
     *  `channelFragment` ("": any), as the Python client's find_last_matching_recording (from recording
     *  0 on): its id, -1 when there is none. */
    long findLastMatchingRecording(String channelFragment, int streamId, int sessionId) throws IOException {
        return Native.remoteFindLastMatchingRecording(session, 0, channelFragment, streamId, sessionId);
    }

    @Override
    public void close() {
        Native.remoteClose(session);
    }
}
