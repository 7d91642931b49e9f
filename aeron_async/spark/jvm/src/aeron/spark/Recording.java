package aeron.spark;

import java.io.Serializable;

/** A recording's catalog entry, as much of it as a read needs. */
public final class Recording implements Serializable {
    private static final long serialVersionUID = 1L;

    public final long id, start, stop;
    public final int sessionId, streamId, termLength, segmentLength, initialTermId;
    public final String channel, strippedChannel;

    Recording(long[] fields, int row, String channel, String strippedChannel) {
        int at = row * Native.RECORDING_FIELDS;
        id = fields[at];
        start = fields[at + 1];
        stop = fields[at + 2];
        sessionId = (int) fields[at + 3];
        streamId = (int) fields[at + 4];
        termLength = (int) fields[at + 5];
        segmentLength = (int) fields[at + 6];
        initialTermId = (int) fields[at + 7];
        this.channel = channel;
        this.strippedChannel = strippedChannel;
    }

    boolean stopped() {
        return stop >= 0;
    }
}
