package aeron.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * dropRepeats=true in the JVM connector (docs/spark.md, "dropRepeats: reading a recorded sink stream
 * exactly once"): aeron_async/spark/repeats.py's rule, decided per recording when a batch read is
 * planned, from the catalog and Native.provenanceProbe (the recording's last 32-byte frame and its
 * first message, read from its segment files where the Python source replays them; without
 * archiveDir, replayed over the remote archive's control session as the Python source does):
 * <ul>
 * <li>a recording the sink did not write (no tag) is read as it is;</li>
 * <li>of the finished attempts of one task (same kind, batch and partition; each ends with its end
 *     marker), the lowest recording id is read, the others are left out;</li>
 * <li>an attempt that did not finish (no end marker, or still being recorded) is left out;</li>
 * <li>the end markers are no rows (RangePartition's dropMarkers: the walk skips them; a remote
 *     range's reader takes them out of each replayed batch).</li>
 * </ul>
 * The reserved value layout is aeron_async/spark/provenance.py's.
 */
final class Repeats {
    static final int TAG = 0b10;
    static final int END_MARKER_FRAME = 32;

    private Repeats() {
    }

    /** The provenance group (kind, batch, partition) of a reserved value the sink wrote, else -1. */
    static long group(long reservedValue) {
        if ((reservedValue >>> 62) != TAG) {
            return -1;
        }
        long kind = (reservedValue >>> 61) & 1;
        long batch = (reservedValue >>> 28) & 0xFFFFFFFFL;
        long partition = (reservedValue >>> 8) & 0xFFFFFL;
        return (kind << 52) | (batch << 20) | partition;
    }

    static boolean isEndMarker(long reservedValue) {
        return group(reservedValue) >= 0 && ((reservedValue >>> 60) & 1) == 1;
    }

    /** {group or -1 (not the sink's), 1 when the attempt finished}: repeats.py's classify. */
    static long[] classify(Options options, Recording r) {
        long stop = AeronScan.recordedEnd(options, r);
        if (stop <= r.start) {
            return new long[] {-1, 0};
        }
        long[] found;
        try {
            found = Native.provenanceProbe(options.archiveDir, r.id, r.start, stop, r.termLength, r.segmentLength,
                r.initialTermId, r.streamId, r.stopped());
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
        if (r.stopped() && stop - r.start >= END_MARKER_FRAME && found[0] == 1 && isEndMarker(found[1])) {
            return new long[] {group(found[1]), 1};
        }
        return new long[] {found[2] == 1 ? group(found[3]) : -1, 0};
    }

    /** classify over a remote archive's control session: the last 32-byte frame and the first message
     *  replayed as the Python source replays them (the replay of a last frame that is not a frame's
     *  start is refused by the archive: no end marker there). */
    static long[] classify(Remote archive, Options options, Recording r) throws IOException {
        long stop = r.stopped() ? r.stop : archive.maxRecordedPosition(r.id);
        if (stop <= r.start) {
            return new long[] {-1, 0};
        }
        if (r.stopped() && stop - r.start >= END_MARKER_FRAME) {
            Long last;
            try {
                last = archive.firstReserved(options, r.id, stop - END_MARKER_FRAME, END_MARKER_FRAME);
            } catch (IOException e) {
                last = null;
            }
            if (last != null && isEndMarker(last)) {
                return new long[] {group(last), 1};
            }
        }
        Long first = archive.firstReserved(options, r.id, r.start, stop - r.start);
        return new long[] {first != null ? group(first) : -1, 0};
    }

    /** How a recording is classified: from its segment files, or over a control session. */
    interface Classifier {
        long[] classify(Recording r) throws IOException;
    }

    /** The recordings of `recordings` (by id) that dropRepeats reads, classified from the segment
     *  files: repeats.py's recordings_to_drop left out. */
    static List<Recording> kept(Options options, List<Recording> recordings) {
        try {
            return kept(recordings, r -> classify(options, r));
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
    }

    /** The recordings of `recordings` (by id) that dropRepeats reads, each classified by `classifier`. */
    static List<Recording> kept(List<Recording> recordings, Classifier classifier) throws IOException {
        Map<Long, List<Long>> finished = new TreeMap<>();
        Set<Long> drop = new HashSet<>();
        for (Recording r : recordings) {
            long[] found = classifier.classify(r);
            if (found[0] < 0) {
                continue;
            }
            if (found[1] == 1) {
                finished.computeIfAbsent(found[0], k -> new ArrayList<>()).add(r.id);
            } else {
                drop.add(r.id);
            }
        }
        for (List<Long> ids : finished.values()) {
            ids.sort(Long::compare);
            drop.addAll(ids.subList(1, ids.size()));
        }
        List<Recording> kept = new ArrayList<>();
        for (Recording r : recordings) {
            if (!drop.contains(r.id)) {
                kept.add(r);
            }
        }
        return kept;
    }
}
