package aeron.spark;

import org.apache.spark.sql.connector.read.InputPartition;

/** One task's work: the messages of one recording starting in [from, to), ending in [endLow, endHigh]. */
final class RangePartition implements InputPartition {
    private static final long serialVersionUID = 1L;

    final String archiveDir;
    final Recording recording;
    final long from, to, endLow, endHigh;
    final boolean failOnDataLoss;
    /** where the walk stops: a stopped recording's stop position, or for an active one the end of
     *  the micro-batch (a message boundary it has recorded) */
    final long limit;

    /** an active recording read in a batch up to the position it had recorded at planning (the walk
     *  stops before a message not recorded whole there) */
    final boolean partialOk;
    /** dropRepeats: the sink's end markers are no rows (the walk skips them) */
    final boolean dropMarkers;
    /** a remote archive's range (no archiveDir): the options its task opens a control session with */
    final Options remote;

    /** A range of a remote archive's recording, read by a replay (Readers.RemoteRangeReader). */
    RangePartition(Options remote, Recording recording, long from, long to) {
        this(remote, recording, from, to, false);
    }

    /** A remote range whose batches leave out the sink's end markers with dropMarkers (dropRepeats). */
    RangePartition(Options remote, Recording recording, long from, long to, boolean dropMarkers) {
        this.remote = remote;
        this.archiveDir = null;
        this.recording = recording;
        this.from = from;
        this.to = to;
        this.endLow = Long.MIN_VALUE;
        this.endHigh = Long.MAX_VALUE;
        this.failOnDataLoss = remote.failOnDataLoss;
        this.limit = to;
        this.partialOk = false;
        this.dropMarkers = dropMarkers;
    }

    RangePartition(String archiveDir, Recording recording, long from, long to, long endLow, long endHigh,
                   boolean failOnDataLoss, long limit) {
        this(archiveDir, recording, from, to, endLow, endHigh, failOnDataLoss, limit, false, false);
    }

    RangePartition(String archiveDir, Recording recording, long from, long to, long endLow, long endHigh,
                   boolean failOnDataLoss, long limit, boolean partialOk, boolean dropMarkers) {
        this.remote = null;
        this.partialOk = partialOk;
        this.dropMarkers = dropMarkers;
        this.limit = limit;
        this.archiveDir = archiveDir;
        this.recording = recording;
        this.from = from;
        this.to = to;
        this.endLow = endLow;
        this.endHigh = endHigh;
        this.failOnDataLoss = failOnDataLoss;
    }

    /** The walk's state at the start: from the term start at or before `from` (the recording's start at least). */
    long[] initialState() {
        long[] state = new long[Native.S_LENGTH];
        state[Native.S_CURSOR] = Math.max(recording.start, AeronScan.floorTerm(from, recording.termLength));
        state[Native.S_FROM] = from;
        state[Native.S_TO] = to;
        state[Native.S_END_LOW] = endLow;
        state[Native.S_END_HIGH] = endHigh;
        state[Native.S_PARTIAL_OK] = partialOk ? 1 : 0;
        state[Native.S_DROP_MARKERS] = dropMarkers ? 1 : 0;
        return state;
    }

    @Override
    public String toString() {
        return "RangePartition(recording " + recording.id + ", [" + from + ", " + to + "))";
    }
}

/** An aggregate's one partition: every range, walked by one task. */
final class AggregatePartition implements InputPartition {
    private static final long serialVersionUID = 1L;

    final RangePartition[] ranges;

    AggregatePartition(RangePartition[] ranges) {
        this.ranges = ranges;
    }
}
