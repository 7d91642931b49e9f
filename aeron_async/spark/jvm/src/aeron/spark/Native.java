package aeron.spark;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The project's native library for the JVM (aa_spark_jni.c, aa_spark_jni_sink.c and
 * aa_spark_jni_remote.c beside the Java sources): an archive's catalog and segment files read through
 * the C archive code, the sink's exclusive publications through the C client, and a remote archive's
 * control sessions and replays through the C client and the archive codecs. Loaded once per JVM from the system
 * property {@code aeron.spark.native} when set, else from the copy inside this jar.
 */
public final class Native {
    /** longs per recording in {@link #recordings}: id, start, stop, session id, stream id, term length,
     *  segment length, initial term id. */
    public static final int RECORDING_FIELDS = 8;
    /** the walk's state array: cursor, from, to, end low, end high, rows, data length, done, required,
     *  partial ok (an active recording: stop before a message not recorded whole), row limit (count),
     *  drop markers (dropRepeats: the sink's end markers are no rows). */
    public static final int S_CURSOR = 0, S_FROM = 1, S_TO = 2, S_END_LOW = 3, S_END_HIGH = 4, S_ROWS = 5,
        S_DATA_LENGTH = 6, S_DONE = 7, S_REQUIRED = 8, S_PARTIAL_OK = 9, S_ROW_LIMIT = 10, S_DROP_MARKERS = 11,
        S_LENGTH = 12;
    static final String RESOURCE = "/aeron/spark/native/libaeron_async_spark.so";

    private static boolean loaded;

    private Native() {
    }

    public static synchronized void load() {
        if (loaded) {
            return;
        }
        String given = System.getProperty("aeron.spark.native");
        if (given != null && !given.isEmpty()) {
            System.load(given);
        } else {
            try (InputStream in = Native.class.getResourceAsStream(RESOURCE)) {
                if (in == null) {
                    throw new UnsatisfiedLinkError("the aeron connector's jar has no " + RESOURCE
                        + ": rebuild it (python -m aeron_async.spark.jvm.build) or set -Daeron.spark.native");
                }
                Path copy = Files.createTempFile("libaeron_async_spark", ".so");
                Files.copy(in, copy, StandardCopyOption.REPLACE_EXISTING);
                copy.toFile().deleteOnExit();
                System.load(copy.toString());
            } catch (IOException e) {
                throw new UnsatisfiedLinkError("the aeron connector cannot unpack its native library: " + e);
            }
        }
        loaded = true;
    }

    public static native long[] recordings(String archiveDir) throws IOException;

    /** {original channel, stripped channel} of a recording. */
    public static native String[] channels(String archiveDir, long recordingId) throws IOException;

    public static native void read(String archiveDir, long recordingId, long startPosition, long stopPosition,
                                   int termLength, int segmentLength, long[] state, ByteBuffer data,
                                   ByteBuffer offsets, ByteBuffer positions, ByteBuffer reservedValues)
        throws IOException;

    /** A reader of a recording's segment files that keeps the one it last read mapped between
     *  {@link #readerRead} calls (a reader polling an active recording, a range read batch after
     *  batch): a handle for readerRead and readerClose. */
    public static native long readerOpen(String archiveDir, long recordingId, long startPosition, int termLength,
                                         int segmentLength) throws IOException;

    /** {@link #read} through a reader handle, up to stopPosition (the recording's stop position, or
     *  what an active one has recorded). */
    public static native void readerRead(long reader, long stopPosition, long[] state, ByteBuffer data,
                                         ByteBuffer offsets, ByteBuffer positions, ByteBuffer reservedValues)
        throws IOException;

    /** Unmaps the reader's segment file and frees it; 0 is ignored. */
    public static native void readerClose(long reader);

    /** An active recording's recorded position (its rec-pos counter in the driver's CnC file), -1 when none. */
    public static native long recordedPosition(String aeronDir, long recordingId) throws IOException;

    /** An active recording's rec-pos counter kept open: a handle, or 0 when it has none (stopped). */
    public static native long counterOpen(String aeronDir, long recordingId) throws IOException;

    /** The counter's value, -1 once it is no longer the recording's (it stopped). */
    public static native long counterValue(long handle, long recordingId);

    public static native void counterClose(long handle);

    /** {messages, smallest end position, largest end position} (-1 when none) of a range; the state's
     *  cursor is left after the last message counted. */
    public static native long[] count(String archiveDir, long recordingId, long startPosition, long stopPosition,
                                      int termLength, int segmentLength, long[] state) throws IOException;

    /** dropRepeats' look at a recording (aa_spark_jni_repeats.c): {1 when the 32 bytes before a stopped
     *  recording's stop position are one whole message, its reserved value, 1 when a whole message
     *  starts in [start, stop), its reserved value}; `stop`: the stop or recorded position. */
    public static native long[] provenanceProbe(String archiveDir, long recordingId, long startPosition,
                                                long stopPosition, int termLength, int segmentLength,
                                                int initialTermId, int streamId, boolean stopped)
        throws IOException;

    /** A client of the media driver in aeronDir (null: AERON_DIR, else Aeron's default): a handle. */
    public static native long clientConnect(String aeronDir, long timeoutMs) throws IOException;

    /** False once the driver timed the client out or went away. */
    public static native boolean clientAlive(long client);

    public static native void clientClose(long client);

    /** An exclusive publication of the client: a handle. */
    public static native long publicationAdd(long client, String channel, int streamId, long timeoutMs)
        throws IOException;

    public static native boolean publicationConnected(long publication);

    public static native int publicationSessionId(long publication);

    public static native long publicationPosition(long publication);

    public static native void publicationClose(long publication);

    /** Offers messages from..from+count (message i: data bytes offsets[i]..offsets[i+1], int32 offsets)
     *  with one reserved value: how many went in, or the refusal code (negative) when none did. */
    public static native long publicationOffer(long publication, ByteBuffer data, ByteBuffer offsets, int from,
                                               int count, long reservedValue) throws IOException;

    /** {recording id, recorded position} of the active recording of a session and stream (its rec-pos
     *  counter in the driver's CnC file), {-1, -1} when there is none. */
    public static native long[] recordedBySession(String aeronDir, int sessionId, int streamId) throws IOException;

    /** A control session with a remote archive (aa_spark_jni_remote.c): its own client of the driver in
     *  aeronDir, the session-id'd control and response channels; a handle for the remote* calls. */
    public static native long remoteOpen(String aeronDir, String controlChannel, int controlStreamId,
                                         String responseChannel, int responseStreamId, double timeoutSeconds)
        throws IOException;

    /** CloseSession, then the session's publication, subscription and client. */
    public static native void remoteClose(long session);

    /** {long[] fields (RECORDING_FIELDS a recording), String[] {original channel, stripped channel} a
     *  recording} of recording `recordingId` (none when the archive does not know it), or with a
     *  negative id of the recordings of `streamId` whose original channel contains `channel`. */
    public static native Object[] remoteList(long session, long recordingId, String channel, int streamId)
        throws IOException;

    /** How far the recording has been written (its stop position once stopped). */
    public static native long remoteMaxRecordedPosition(long session, long recordingId) throws IOException;

    /** The newest recording, from minRecordingId on, of `streamId` and of `sessionId` (-1: any) whose
     *  original channel contains `channelFragment` ("" : any): its id, -1 when there is none. */
    public static native long remoteFindLastMatchingRecording(long session, long minRecordingId,
                                                              String channelFragment, int streamId, int sessionId)
        throws IOException;

    /** A replay of [position, position + length) to the replay channel, read for the messages starting
     *  in [from, to): a handle for remoteReplayPoll and remoteReplayClose. */
    public static native long remoteReplayOpen(long session, long recordingId, long position, long length,
                                               String replayChannel, int replayStreamId, long from, long to)
        throws IOException;

    /** The next batch into the column buffers: out = {rows, data bytes the next message needs (no rows
     *  then), 1 when the range is done, the position where the replay ended before `to` (else -1)}. */
    public static native void remoteReplayPoll(long replay, long[] out, ByteBuffer data, ByteBuffer offsets,
                                               ByteBuffer positions, ByteBuffer reservedValues) throws IOException;

    /** StopReplay (unless it ended) and the replay's subscription; 0 is ignored. */
    public static native void remoteReplayClose(long replay);
}
